package io.refpool.bench.runner;

import de.erichseifert.vectorgraphics2d.VectorGraphics2D;
import de.erichseifert.vectorgraphics2d.svg.SVGProcessor;
import de.erichseifert.vectorgraphics2d.util.PageSize;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerException;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.w3c.dom.Attr;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * Writes a suite's scaling panels as one SVG file ({@code <suite>.svg}), panels stacked top to
 * bottom.
 *
 * <pre>{@code
 * SvgChartWriter.write("attach: throughput vs threads", ScalingCharts.build(attach), out.resolve("attach.svg"));
 * }</pre>
 *
 * <p>Each panel is painted by XChart into VectorGraphics2D's SVG backend (the one XChart's {@code
 * VectorGraphicsEncoder} uses) through {@link TextKeepingGraphics}, so its words stay text, and is
 * nested as its own {@code <svg>} element with a {@code <title>} and a {@code <desc>} listing the
 * plotted values. Element ids are prefixed per panel, since each panel numbers its clip paths on
 * its own. Needs a headless AWT ({@code java.awt.headless=true}) on a machine without a display.
 */
final class SvgChartWriter {
    static final String SVG_NS = "http://www.w3.org/2000/svg";
    private static final String XLINK_NS = "http://www.w3.org/1999/xlink";
    private static final String FONT_FALLBACK = "Arial,Helvetica,sans-serif";

    private SvgChartWriter() {}

    static void write(String title, List<ScalingChart> panels, Path file) throws IOException {
        Document document = render(title, panels);
        try (OutputStream out = Files.newOutputStream(file)) {
            Transformer transformer = TransformerFactory.newInstance().newTransformer();
            transformer.setOutputProperty(OutputKeys.ENCODING, "UTF-8");
            transformer.transform(new DOMSource(document), new StreamResult(out));
        } catch (TransformerException e) {
            throw new IOException("cannot write chart " + file + ": " + e.getMessage(), e);
        }
    }

    static Document render(String title, List<ScalingChart> panels) throws IOException {
        DocumentBuilder builder = documentBuilder();
        Document document = builder.newDocument();
        int width = ScalingCharts.WIDTH;
        int height = ScalingCharts.HEIGHT * panels.size();
        Element root = document.createElementNS(SVG_NS, "svg");
        root.setAttributeNS(XMLConstants.XMLNS_ATTRIBUTE_NS_URI, "xmlns", SVG_NS);
        root.setAttributeNS(XMLConstants.XMLNS_ATTRIBUTE_NS_URI, "xmlns:xlink", XLINK_NS);
        root.setAttribute("version", "1.1");
        root.setAttribute("width", width + "px");
        root.setAttribute("height", height + "px");
        root.setAttribute("viewBox", "0 0 " + width + " " + height);
        document.appendChild(root);
        root.appendChild(textElement(document, "title", title));
        for (int i = 0; i < panels.size(); i++) {
            ScalingChart panel = panels.get(i);
            Document painted = paint(panel, builder);
            Element nested = document.createElementNS(SVG_NS, "svg");
            nested.setAttribute("id", "panel-" + (i + 1));
            nested.setAttribute("x", "0");
            nested.setAttribute("y", String.valueOf(i * ScalingCharts.HEIGHT));
            nested.setAttribute("width", String.valueOf(ScalingCharts.WIDTH));
            nested.setAttribute("height", String.valueOf(ScalingCharts.HEIGHT));
            nested.setAttribute("viewBox", "0 0 " + ScalingCharts.WIDTH + " " + ScalingCharts.HEIGHT);
            nested.appendChild(textElement(document, "title", panel.title()));
            nested.appendChild(textElement(document, "desc", "throughput, ops/s, by threads: " + panel.description()));
            String prefix = "p" + (i + 1) + "-";
            for (Node child = painted.getDocumentElement().getFirstChild();
                    child != null;
                    child = child.getNextSibling()) {
                Node imported = document.importNode(child, true);
                adopt(imported, prefix);
                nested.appendChild(imported);
            }
            root.appendChild(nested);
        }
        return document;
    }

    /** Paints the panel with XChart into an SVG document of its own. */
    private static Document paint(ScalingChart panel, DocumentBuilder builder) throws IOException {
        VectorGraphics2D graphics = new TextKeepingGraphics(panel.texts());
        panel.xyChart().paint(graphics, ScalingCharts.WIDTH, ScalingCharts.HEIGHT);
        ByteArrayOutputStream svg = new ByteArrayOutputStream();
        new SVGProcessor()
                .getDocument(graphics.getCommands(), new PageSize(0, 0, ScalingCharts.WIDTH, ScalingCharts.HEIGHT))
                .writeTo(svg);
        try {
            return builder.parse(new ByteArrayInputStream(svg.toByteArray()));
        } catch (SAXException e) {
            throw new IOException("chart '" + panel.title() + "' produced malformed SVG: " + e.getMessage(), e);
        }
    }

    /** Makes ids unique per panel and gives text a font fallback. */
    private static void adopt(Node node, String prefix) {
        if (node instanceof Element element) {
            NamedNodeMap attributes = element.getAttributes();
            for (int i = 0; i < attributes.getLength(); i++) {
                Attr attribute = (Attr) attributes.item(i);
                String value = attribute.getValue();
                if (attribute.getName().equals("id")) {
                    attribute.setValue(prefix + value);
                } else if (attribute.getName().equals("style") && value.contains("font-family:")) {
                    // the SVG names the JVM's font; let a browser without it fall back to a sans-serif
                    attribute.setValue(
                            value.replaceFirst("font-family:([^;]*);", "font-family:$1," + FONT_FALLBACK + ";"));
                } else if (value.contains("url(#")) {
                    attribute.setValue(value.replace("url(#", "url(#" + prefix));
                } else if (attribute.getLocalName() != null
                        && attribute.getLocalName().equals("href")
                        && value.startsWith("#")) {
                    attribute.setValue("#" + prefix + value.substring(1));
                }
            }
        }
        for (Node child = node.getFirstChild(); child != null; child = child.getNextSibling()) {
            adopt(child, prefix);
        }
    }

    private static Element textElement(Document document, String name, String text) {
        Element element = document.createElementNS(SVG_NS, name);
        element.setTextContent(text);
        return element;
    }

    /** A namespace-aware parser that never fetches the SVG 1.1 DTD the painted documents name. */
    static DocumentBuilder documentBuilder() {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setExpandEntityReferences(false);
            return factory.newDocumentBuilder();
        } catch (ParserConfigurationException e) {
            throw new IllegalStateException("the JDK's XML parser lacks a standard feature", e);
        }
    }
}
