package io.refpool.bench.runner;

import static io.refpool.bench.runner.SvgDocuments.elements;
import static io.refpool.bench.runner.SvgDocuments.texts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

class SvgChartWriterTest {
    private static final String TITLE = "attach (AttachBenchmark): throughput vs threads";

    @TempDir
    Path directory;

    private Document writeAndParse(SuiteResult suite) throws Exception {
        Path file = directory.resolve(suite.name() + ".svg");
        SvgChartWriter.write(TITLE, ScalingCharts.build(suite), file);
        return SvgDocuments.parse(file);
    }

    private static Element onlyPanel(Document svg) {
        List<Element> panels = elements(svg.getDocumentElement(), "svg");
        assertEquals(1, panels.size(), "one panel: the one scaling benchmark at its one parameter value");
        return panels.get(0);
    }

    /** One scaling row per thread count, refpool and swap-flag, in the given benchmark and params. */
    private static List<RowResult> scalingRows(String benchmark, Map<String, String> params, List<Integer> threads) {
        List<RowResult> rows = new ArrayList<>();
        for (int count : threads) {
            rows.add(new RowResult(
                    CannedResults.row(benchmark, Mode.Throughput, params, count, true),
                    List.of(CannedResults.thrpt("refpool", 100e6 * count), CannedResults.thrpt("swap-flag", 90e6)),
                    List.of()));
        }
        return rows;
    }

    @Test
    void theFileIsWellFormedSvgWithTheSuiteTitle() throws Exception {
        Element root = writeAndParse(CannedResults.attachSuite()).getDocumentElement();
        assertEquals("svg", root.getLocalName());
        assertEquals(SvgChartWriter.SVG_NS, root.getNamespaceURI());
        assertEquals(TITLE, elements(root, "title").get(0).getTextContent());
    }

    @Test
    void thePanelShowsItsTitleAndAxisTitlesAsText() throws Exception {
        Element panel = onlyPanel(writeAndParse(CannedResults.attachSuite()));
        String title = "attach: nested state=sparse - throughput vs threads";
        assertEquals(title, elements(panel, "title").get(0).getTextContent());
        List<String> texts = texts(panel);
        assertTrue(texts.contains(title), texts.toString());
        assertTrue(texts.contains("threads"), texts.toString());
        assertTrue(texts.contains("throughput, ops/s, all threads (log scale)"), texts.toString());
    }

    @Test
    void eachImplementationHasALegendEntryAsTextAndALineInItsColour() throws Exception {
        Element panel = onlyPanel(writeAndParse(CannedResults.attachSuite()));
        List<String> legend = texts(elements(panel, "g").stream()
                .filter(group -> group.getAttribute("class").equals("legend"))
                .findFirst()
                .orElseThrow());
        List<String> lineColours = elements(panel, "polyline").stream()
                .map(line -> line.getAttribute("stroke"))
                .toList();
        List<String> names = CannedResults.IMPLS.stream() // the harness's "refpool" is the queue check
                .map(impl -> ScalingCharts.seriesName("nested", impl))
                .toList();
        assertEquals(names, legend, "the legend names the series in their order");
        List<String> texts = texts(panel);
        for (String impl : names) {
            assertTrue(texts.contains(impl), "no text names " + impl + ": " + texts);
            String colour = ScalingCharts.colorOf(impl, names);
            assertTrue(lineColours.contains(colour), impl + " has no line in " + colour + ": " + lineColours);
        }
        assertTrue(elements(panel, "desc")
                .get(0)
                .getTextContent()
                .contains("refpool queue check: 1 -> 105.0M, 2 -> 210.0M, 4 -> 420.0M"));
    }

    @Test
    void ticksAreLabelledWithThreadCountsAndThroughputNumbers() throws Exception {
        List<String> texts = texts(onlyPanel(writeAndParse(CannedResults.attachSuite())));
        assertTrue(texts.containsAll(List.of("1", "2", "4")), texts.toString());
        List<String> yTicks =
                texts.stream().filter(t -> t.matches("[0-9.]+[kMG]")).toList();
        // 12.5M to 420M on a log axis: ticks every half decade
        assertEquals(List.of("31.6M", "100M", "316M"), yTicks);
    }

    @Test
    void aNarrowSpreadKeepsALinearAxis() throws Exception {
        SuiteResult suite =
                new SuiteResult("attach", "AttachBenchmark", scalingRows("nested", Map.of(), List.of(1, 2)));
        assertFalse(ScalingCharts.build(suite).get(0).logarithmic());
        List<String> texts = texts(onlyPanel(writeAndParse(suite)));
        assertTrue(texts.contains("throughput, ops/s, all threads"), texts.toString());
        assertTrue(texts.containsAll(List.of("100M", "150M", "200M")), texts.toString());
    }

    @Test
    void theLineNamedRefpoolIsThePoolsOwnNestedAttachNotTheQueueHarness() {
        assertEquals("refpool", ScalingCharts.seriesName("nestedPool", ImplResult.NO_IMPL));
        assertEquals("refpool queue check", ScalingCharts.seriesName("nested", "refpool"));
        assertEquals("always-lock", ScalingCharts.seriesName("nested", "always-lock"));
        assertEquals("flat", ScalingCharts.seriesName("flat", ImplResult.NO_IMPL));
    }

    @Test
    void aSingleThreadCountIsNamedInTheAxisTitle() throws Exception {
        SuiteResult suite = new SuiteResult("attach", "AttachBenchmark", scalingRows("nested", Map.of(), List.of(2)));
        List<String> texts = texts(onlyPanel(writeAndParse(suite)));
        assertTrue(texts.contains("threads: 2"), texts.toString());
    }

    @Test
    void panelsStackOneBelowTheOther() throws Exception {
        List<RowResult> rows = new ArrayList<>(scalingRows("nested", Map.of(), List.of(1, 2)));
        rows.addAll(scalingRows("flat", Map.of(), List.of(1, 2)));
        Element root = writeAndParse(new SuiteResult("attach", "AttachBenchmark", rows))
                .getDocumentElement();
        List<Element> panels = elements(root, "svg");
        assertEquals(
                List.of("0", "420"),
                panels.stream().map(p -> p.getAttribute("y")).toList());
        assertEquals("0 0 760 840", root.getAttribute("viewBox"));
    }

    @Test
    void markupInNamesStaysText() throws Exception {
        SuiteResult suite = new SuiteResult(
                "attach", "AttachBenchmark", scalingRows("nested", Map.of("shape", "<a & \"b\">"), List.of(1, 2)));
        List<String> texts = texts(onlyPanel(writeAndParse(suite)));
        assertTrue(texts.contains("attach: nested shape=<a & \"b\"> - throughput vs threads"), texts.toString());
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
