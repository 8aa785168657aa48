package io.zkcoord.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import picocli.CommandLine;

/**
 * Durations on the command line: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 0}, or
 * ISO-8601 ({@code PT1M30S}); and the short form used to print them back.
 */
final class Durations {

    private Durations() {
    }

    /**
     * @throws CommandLine.TypeConversionException if {@code value} is not a duration of zero or more
     */
    static Duration parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Duration d;
        try {
            if (v.startsWith("pt") || v.startsWith("p")) {
                d = Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            } else if (v.equals("0")) {
                d = Duration.ZERO;
            } else if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
            } else if (v.endsWith("m")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)) * 60);
            } else if (v.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            } else {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException(
                    "'" + value + "' is not a duration (examples: 500ms, 30s, 5m, 2h, PT1M30S)");
        }
        if (d.isNegative()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is negative");
        }
        return d;
    }

    /** @return {@code d} as {@code 3h05m}, {@code 12m30s}, {@code 4.2s} or {@code 350ms} */
    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = ms / 1000;
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        if (s < 86_400) {
            return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
        }
        return String.format(Locale.ROOT, "%dd%02dh", s / 86_400, (s % 86_400) / 3600);
    }

    /** For picocli's {@code converter = Durations.Converter.class}. */
    static final class Converter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return parse(value);
        }
    }
}
