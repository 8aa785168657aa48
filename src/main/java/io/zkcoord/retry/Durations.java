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
        return requireNanos(d, name);
    }

    static Duration requirePositive(Duration d, String name) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + d);
        }
        return requireNanos(d, name);
    }

    static int requireRetries(int maxRetries) {
        if (maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries must be zero or more, was " + maxRetries);
        }
        return maxRetries;
    }

    /**
     * Delays are counted and slept in nanoseconds; a longer duration would fail later, with an
     * {@link ArithmeticException} in the middle of a retry, instead of here.
     */
    private static Duration requireNanos(Duration d, String name) {
        try {
            d.toNanos();
        } catch (ArithmeticException tooLong) {
            throw new IllegalArgumentException(name + " must fit in a long of nanoseconds (about 292 years), was " + d);
        }
        return d;
    }
}
