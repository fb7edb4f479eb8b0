package io.refpool.bench.runner;

import de.erichseifert.vectorgraphics2d.VectorGraphics2D;
import java.awt.Font;
import java.awt.Shape;
import java.awt.font.TextLayout;
import java.awt.geom.AffineTransform;
import java.awt.geom.PathIterator;
import java.awt.geom.Rectangle2D;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A VectorGraphics2D that turns text XChart paints as glyph outlines back into text, so the SVG
 * has real {@code <text>} elements: searchable, selectable, readable by tests and screen readers.
 *
 * <pre>{@code
 * TextKeepingGraphics graphics = new TextKeepingGraphics(Set.of("threads", "refpool", "200M"));
 * xyChart.paint(graphics, width, height);   // then graphics.getCommands() to the SVG processor
 * }</pre>
 *
 * <p>XChart draws every string as {@code g.fill(new TextLayout(text, font, frc).getOutline(t))}.
 * This class is given the strings the chart may draw (titles, axis titles, series names and the
 * labels its tick formatters produced) and checks each filled shape against their outlines in the
 * current font, upright or turned a quarter either way (the y axis title). A shape that equals a
 * candidate's outline point for point is drawn with {@code drawString} at the same place instead;
 * any other shape is filled as usual, so an unrecognised string still shows, as an outline.
 */
final class TextKeepingGraphics extends VectorGraphics2D {
    private static final double TOLERANCE = 0.01;
    private static final List<Double> ANGLES = List.of(0.0, -Math.PI / 2, Math.PI / 2);

    private final Set<String> candidates;
    private final Map<OutlineKey, Shape> outlines = new HashMap<>();

    TextKeepingGraphics(Set<String> candidates) {
        this.candidates = candidates;
    }

    @Override
    public void fill(Shape shape) {
        Rectangle2D bounds = shape.getBounds2D();
        for (String text : candidates) {
            Shape outline = outline(text);
            Rectangle2D plain = outline.getBounds2D();
            for (double angle : ANGLES) {
                AffineTransform rotation = AffineTransform.getRotateInstance(angle);
                Rectangle2D turned = rotation.createTransformedShape(plain).getBounds2D();
                if (!close(turned.getWidth(), bounds.getWidth()) || !close(turned.getHeight(), bounds.getHeight())) {
                    continue;
                }
                AffineTransform placement = AffineTransform.getTranslateInstance(
                        bounds.getX() - turned.getX(), bounds.getY() - turned.getY());
                placement.concatenate(rotation);
                if (samePath(placement.createTransformedShape(outline), shape)) {
                    AffineTransform saved = getTransform();
                    transform(placement);
                    drawString(text, 0f, 0f);
                    setTransform(saved);
                    return;
                }
            }
        }
        super.fill(shape);
    }

    private Shape outline(String text) {
        Font font = getFont();
        return outlines.computeIfAbsent(
                new OutlineKey(text, font),
                key -> new TextLayout(key.text(), key.font(), getFontRenderContext()).getOutline(null));
    }

    private static boolean samePath(Shape expected, Shape actual) {
        PathIterator a = expected.getPathIterator(null);
        PathIterator b = actual.getPathIterator(null);
        double[] x = new double[6];
        double[] y = new double[6];
        while (!a.isDone() && !b.isDone()) {
            if (a.currentSegment(x) != b.currentSegment(y)) {
                return false;
            }
            for (int i = 0; i < x.length; i++) {
                if (!close(x[i], y[i])) {
                    return false;
                }
            }
            a.next();
            b.next();
        }
        return a.isDone() && b.isDone();
    }

    private static boolean close(double a, double b) {
        return Math.abs(a - b) <= TOLERANCE;
    }

    /** A string in a font: the outline cache's key. */
    private record OutlineKey(String text, Font font) {}
}
