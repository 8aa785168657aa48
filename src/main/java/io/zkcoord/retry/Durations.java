package io.zkcoord.retry;

import java.time.Duration;

/** Argument checks shared by the policies. */
final class Durations {

    private Durations() {
    }

    static Duration requireNonNegative(Duration d, String name) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException(name + " must be zero or more, was " + d);
        }
        return d;
    }

    static Duration requirePositive(Duration d, String name) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + d);
        }
        return d;
    }

    static int requireRetries(int maxRetries) {
        if (maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries must be zero or more, was " + maxRetries);
        }
        return maxRetries;
    }
}
