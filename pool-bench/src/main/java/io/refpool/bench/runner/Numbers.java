package io.refpool.bench.runner;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/**
 * Number forms for tables, charts and CSV.
 *
 * <pre>{@code
 * Numbers.compact(123_456_789);   // "123.5M"
 * Numbers.compact(12.3456);       // "12.35"
 * Numbers.exact(1.2e8);           // "120000000", for CSV
 * }</pre>
 */
final class Numbers {
    private static final MathContext FOUR_DIGITS = new MathContext(4);
    private static final MathContext THREE_DIGITS = new MathContext(3);
    private static final String[] SUFFIXES = {"", "k", "M", "G", "T", "P"};

    private Numbers() {}

    /**
     * Four significant digits; from 100,000 up with an SI suffix (k, M, G, ...). Empty for
     * {@code NaN}, so a missing number leaves a blank cell.
     */
    static String compact(double value) {
        return scaled(value, FOUR_DIGITS, false);
    }

    /** Three significant digits without trailing zeros, for axis ticks: "1.2G", "250M", "0.5". */
    static String short3(double value) {
        return scaled(value, THREE_DIGITS, true);
    }

    private static String scaled(double value, MathContext digits, boolean stripZeros) {
        if (Double.isNaN(value)) {
            return "";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "inf" : "-inf";
        }
        if (value == 0) {
            return "0";
        }
        int group = 0;
        double scaled = value;
        if (Math.abs(value) >= 100_000) {
            while (Math.abs(scaled) >= 1000 && group < SUFFIXES.length - 1) {
                scaled /= 1000;
                group++;
            }
        }
        BigDecimal rounded = new BigDecimal(scaled).round(digits);
        if (group > 0 && rounded.abs().compareTo(BigDecimal.valueOf(1000)) >= 0 && group < SUFFIXES.length - 1) {
            // 999,999 rounds to 1000k: show it as 1.000M
            scaled /= 1000;
            group++;
            rounded = new BigDecimal(scaled).round(digits);
        }
        if (stripZeros) {
            rounded = rounded.stripTrailingZeros();
        } else if (rounded.precision() < digits.getPrecision()) {
            // 105 has three digits of its own; show the fourth: "105.0"
            rounded = rounded.setScale(rounded.scale() + digits.getPrecision() - rounded.precision());
        }
        return rounded.toPlainString() + SUFFIXES[group];
    }

    /** Bytes per operation: one decimal, so allocation noise below 0.05 B/op reads as "0.0". */
    static String bytes(double value) {
        if (Double.isNaN(value)) {
            return "";
        }
        return value >= 100_000 ? compact(value) : String.format(Locale.ROOT, "%.1f", value);
    }

    /** A ratio with two decimals, e.g. "1.63". */
    static String ratio(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    /** The full value in plain notation for machine readers; empty for {@code NaN}. */
    static String exact(double value) {
        if (!Double.isFinite(value)) {
            return "";
        }
        return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }
}
