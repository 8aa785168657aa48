package io.zkcoord.bench;

import java.util.Arrays;

/** A growable list of nanosecond samples, with percentiles. One per thread; merge at the end. */
final class Samples {

    private long[] values = new long[1024];
    private int size;

    void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    void addAll(Samples other) {
        for (int i = 0; i < other.size; i++) {
            add(other.values[i]);
        }
    }

    int count() {
        return size;
    }

    /** @return the mean in milliseconds; NaN if empty */
    double meanMillis() {
        if (size == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (int i = 0; i < size; i++) {
            sum += values[i];
        }
        return sum / size / 1e6;
    }

    /** @return the {@code p}-th percentile (0 &lt; p &le; 100) in milliseconds, nearest rank; NaN if empty */
    double percentileMillis(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * size);
        return sorted[Math.max(0, Math.min(size, rank) - 1)] / 1e6;
    }
}
