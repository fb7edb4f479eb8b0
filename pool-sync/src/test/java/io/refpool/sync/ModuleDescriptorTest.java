package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The compiled module exports only its API package and depends on nothing but the JDK's base. */
class ModuleDescriptorTest {

    @Test
    void moduleExportsOnlyItsApiPackageAndRequiresOnlyJavaBase() throws IOException, URISyntaxException {
        ModuleDescriptor descriptor = readCompiledDescriptor();

        assertEquals("io.refpool.sync", descriptor.name());
        assertEquals(1, descriptor.exports().size(), () -> "exports: " + descriptor.exports());
        ModuleDescriptor.Exports export = descriptor.exports().iterator().next();
        assertEquals("io.refpool.sync", export.source());
        assertTrue(!export.isQualified(), () -> "export is qualified: " + export);
        Set<String> required = descriptor.requires().stream()
                .map(ModuleDescriptor.Requires::name)
                .collect(Collectors.toSet());
        assertEquals(Set.of("java.base"), required);
    }

    private static ModuleDescriptor readCompiledDescriptor() throws IOException, URISyntaxException {
        Path classes = Path.of(CancellationSource.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path moduleInfo = classes.resolve("module-info.class");
        assertTrue(Files.isRegularFile(moduleInfo), () -> "no module-info.class in " + classes);
        try (InputStream in = Files.newInputStream(moduleInfo)) {
            return ModuleDescriptor.read(in);
        }
    }
}
