package io.zkcoord.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The demos' readable output: one line per event, stamped with the time since the demo began, and
 * at the end a chart of who held the lock when.
 *
 * <p>Child processes get the start time ({@link #t0()}, wall-clock milliseconds) on their command
 * line and stamp their own lines against it, so the lines of every process share one time axis.
 * Thread-safe.
 */
final class Timeline {

    private static final int CHART_WIDTH = 60;

    private final long t0;
    private final Map<String, List<long[]>> holds = new LinkedHashMap<>();

    /** @param t0 the demo's start, in {@link System#currentTimeMillis()} milliseconds */
    Timeline(long t0) {
        this.t0 = t0;
    }

    static Timeline startingNow() {
        return new Timeline(System.currentTimeMillis());
    }

    /** @return the demo's start, in {@link System#currentTimeMillis()} milliseconds */
    long t0() {
        return t0;
    }

    /** @return milliseconds since the demo began */
    long now() {
        return System.currentTimeMillis() - t0;
    }

    /** Prints {@code <time>  <who>  <what>}. */
    void say(String who, String format, Object... args) {
        line(String.format("%7.3fs  %-10s %s", now() / 1000.0, who, String.format(format, args)));
    }

    /** Prints a line as it is (a line relayed from a child process, or a heading). */
    synchronized void line(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Records that {@code who} held a lock from {@code from} to {@code to} (times from {@link #now()}). */
    synchronized void held(String who, long from, long to) {
        holds.computeIfAbsent(who, k -> new ArrayList<>()).add(new long[] {from, Math.max(from, to)});
    }

    /** Makes {@code who} a row of the chart even if it never holds anything. */
    synchronized void row(String who) {
        holds.computeIfAbsent(who, k -> new ArrayList<>());
    }

    /**
     * Prints one row per actor, {@code #} where it held the lock; a column where two rows show
     * {@code #} is a moment when both held it.
     */
    synchronized void printChart(String title) {
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        for (List<long[]> list : holds.values()) {
            for (long[] h : list) {
                start = Math.min(start, h[0]);
                end = Math.max(end, h[1]);
            }
        }
        System.out.println();
        System.out.println(title);
        if (start > end) {
            System.out.println("  (nobody held anything)");
            return;
        }
        double msPerColumn = Math.max(1.0, (end - start) / (double) CHART_WIDTH);
        System.out.printf("  %-10s %.3fs%s%.3fs   (one column = %d ms)%n", "", start / 1000.0,
                " ".repeat(CHART_WIDTH - 12), end / 1000.0, Math.round(msPerColumn));
        for (Map.Entry<String, List<long[]>> row : holds.entrySet()) {
            char[] cells = new char[CHART_WIDTH];
            Arrays.fill(cells, '.');
            for (long[] h : row.getValue()) {
                int from = (int) Math.min(CHART_WIDTH - 1, (h[0] - start) / msPerColumn);
                int to = (int) Math.min(CHART_WIDTH - 1, Math.max(from, (h[1] - start) / msPerColumn - 0.5));
                Arrays.fill(cells, from, to + 1, '#');
            }
            System.out.printf("  %-10s |%s|%n", row.getKey(), new String(cells));
        }
        System.out.flush();
    }
}
