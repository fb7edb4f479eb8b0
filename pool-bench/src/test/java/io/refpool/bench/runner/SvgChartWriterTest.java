package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.Color;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class SvgChartWriterTest {
    private static final String TITLE = "attach (AttachBenchmark): throughput vs threads";

    @TempDir
    Path directory;

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    private Document writeAndParse(SuiteResult suite) throws Exception {
        Path file = directory.resolve(suite.name() + ".svg");
        SvgChartWriter.write(TITLE, ScalingCharts.build(suite), file);
        assertTrue(Files.size(file) > 0);
        return SvgChartWriter.documentBuilder().parse(file.toFile());
    }

    private static List<Element> elements(Element parent, String name) {
        NodeList nodes = parent.getElementsByTagNameNS(SvgChartWriter.SVG_NS, name);
        List<Element> elements = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            elements.add((Element) nodes.item(i));
        }
        return elements;
    }

    private static List<String> texts(Element parent) {
        return elements(parent, "text").stream().map(Element::getTextContent).toList();
    }

    private static Element onlyPanel(Document svg) {
        List<Element> panels = elements(svg.getDocumentElement(), "svg");
        assertEquals(1, panels.size(), "one panel: the one scaling benchmark at its one parameter value");
        return panels.get(0);
    }

    @Test
    void theFileIsAnSvgDocumentWithTheSuiteTitle() throws Exception {
        Element root = writeAndParse(CannedResults.attachSuite()).getDocumentElement();
        assertEquals("svg", root.getLocalName());
        assertEquals(SvgChartWriter.SVG_NS, root.getNamespaceURI());
        assertEquals(TITLE, elements(root, "title").get(0).getTextContent());
    }

    @Test
    void thePanelShowsItsTitleAndLabelledAxesAsText() throws Exception {
        Element panel = onlyPanel(writeAndParse(CannedResults.attachSuite()));
        String title = "attach: nested state=sparse - throughput vs threads";
        assertEquals(title, elements(panel, "title").get(0).getTextContent());
        List<String> texts = texts(panel);
        assertTrue(texts.contains(title), texts.toString());
        assertTrue(texts.contains("threads"), texts.toString());
        assertTrue(texts.contains("throughput, ops/s, all threads (log scale)"), texts.toString());
    }

    @Test
    void eachImplementationHasALineInItsColourAndALegendEntry() throws Exception {
        Element panel = onlyPanel(writeAndParse(CannedResults.attachSuite()));
        List<String> texts = texts(panel);
        // VectorGraphics2D writes a straight segment as <line>, anything longer as <path>
        List<String> strokes = Stream.of("path", "polyline", "line")
                .flatMap(name -> elements(panel, name).stream())
                .map(shape -> shape.getAttribute("style"))
                .filter(style -> style.startsWith("fill:none;stroke:rgb("))
                .toList();
        for (String impl : CannedResults.IMPLS) {
            assertTrue(texts.contains(impl), "legend lacks " + impl + ": " + texts);
            Color color = ScalingCharts.colorOf(impl, CannedResults.IMPLS);
            String stroke = "stroke:rgb(" + color.getRed() + "," + color.getGreen() + "," + color.getBlue() + ")";
            assertTrue(strokes.stream().anyMatch(style -> style.contains(stroke)), impl + " has no line " + stroke);
        }
        assertTrue(elements(panel, "desc")
                .get(0)
                .getTextContent()
                .contains("refpool: 1 -> 105.0M, 2 -> 210.0M, 4 -> 420.0M"));
    }

    @Test
    void ticksAreLabelledWithThreadCountsAndThroughputNumbers() throws Exception {
        List<String> texts = texts(onlyPanel(writeAndParse(CannedResults.attachSuite())));
        assertTrue(texts.containsAll(List.of("1", "2", "4")), texts.toString());
        List<String> yTicks =
                texts.stream().filter(t -> t.matches("[0-9.]+[kMG]")).toList();
        assertTrue(yTicks.size() >= 3, texts.toString());
        assertTrue(yTicks.contains("100M"), yTicks.toString());
    }

    @Test
    void aNarrowSpreadKeepsALinearAxis() throws Exception {
        List<RowResult> rows = new ArrayList<>();
        for (int threads : List.of(1, 2)) {
            rows.add(new RowResult(
                    CannedResults.row("nested", Mode.Throughput, Map.of(), threads, true),
                    List.of(CannedResults.thrpt("refpool", 100e6 * threads), CannedResults.thrpt("swap-flag", 90e6)),
                    List.of()));
        }
        List<ScalingChart> charts = ScalingCharts.build(new SuiteResult("attach", "AttachBenchmark", rows));
        assertFalse(charts.get(0).logarithmic());
        List<String> texts = texts(onlyPanel(writeAndParse(new SuiteResult("attach", "AttachBenchmark", rows))));
        assertTrue(texts.contains("throughput, ops/s, all threads"), texts.toString());
    }

    @Test
    void suitesWithoutScalingRowsHaveNoChart() {
        SuiteResult suite = CannedResults.attachSuite();
        SuiteResult unscaled =
                new SuiteResult("attach", "AttachBenchmark", suite.rows().subList(3, 4));
        assertTrue(ScalingCharts.build(unscaled).isEmpty());
    }

    @Test
    void timeModeScoresBecomeThroughputOfAllThreads() {
        assertEquals(2e9, ScalingCharts.opsPerSecond(1.0, "ns/op", 2), 1e-3);
        assertEquals(5e5, ScalingCharts.opsPerSecond(4.0, "us/op", 2), 1e-6);
        assertEquals(3e6, ScalingCharts.opsPerSecond(3.0, "ops/us", 8), 1e-6);
        assertEquals(7.0, ScalingCharts.opsPerSecond(7.0, "ops/s", 4), 1e-12);
        assertTrue(Double.isNaN(ScalingCharts.opsPerSecond(7.0, "B/op", 4)));
    }
}
