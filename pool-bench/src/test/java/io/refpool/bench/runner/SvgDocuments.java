package io.refpool.bench.runner;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** Reads the charts the runner writes with the JDK's XML parser: a malformed file fails the read. */
final class SvgDocuments {
    private SvgDocuments() {}

    static Document parse(Path file) throws Exception {
        return parse(Files.readString(file));
    }

    static Document parse(String svg) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    /** The SVG elements of a name below {@code parent}, in document order. */
    static List<Element> elements(Element parent, String name) {
        NodeList nodes = parent.getElementsByTagNameNS(SvgChartWriter.SVG_NS, name);
        List<Element> elements = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            elements.add((Element) nodes.item(i));
        }
        return elements;
    }

    /** The words of every {@code <text>} element below {@code parent}. */
    static List<String> texts(Element parent) {
        return elements(parent, "text").stream().map(Element::getTextContent).toList();
    }
}
