package io.zkcoord.retry;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/** See {@link RetryPolicy#exponentialBackoff}. Immutable. */
final class ExponentialBackoff implements RetryPolicy {

    private final Duration base;
    private final Duration max;
    private final int maxRetries;
    /** Returns a number in [0, 1); injected so tests can pin the jitter. */
    private final DoubleSupplier jitter;

    ExponentialBackoff(Duration base, Duration max, int maxRetries, DoubleSupplier jitter) {
        this.base = Durations.requirePositive(base, "base");
        this.max = Durations.requirePositive(max, "max");
        if (max.compareTo(base) < 0) {
            throw new IllegalArgumentException("max (" + max + ") must be at least base (" + base + ")");
        }
        this.maxRetries = Durations.requireRetries(maxRetries);
        this.jitter = jitter;
    }

    static DoubleSupplier randomJitter() {
        return () -> ThreadLocalRandom.current().nextDouble();
    }

    @Override
    public Optional<Duration> retryDelay(int retriesSoFar, Duration elapsed) {
        if (retriesSoFar >= maxRetries) {
            return Optional.empty();
        }
        long ceiling = ceilingNanos(retriesSoFar);
        long half = ceiling / 2;
        long delay = half + (long) (jitter.getAsDouble() * (ceiling - half));
        return Optional.of(Duration.ofNanos(delay));
    }

    /** min(max, base * 2^n), without overflow. */
    private long ceilingNanos(int n) {
        long maxNanos = max.toNanos();
        long d = base.toNanos();
        for (int i = 0; i < n && d < maxNanos; i++) {
            d = d > maxNanos / 2 ? maxNanos : d * 2;
        }
        return Math.min(d, maxNanos);
    }

    @Override
    public String toString() {
        return "exponentialBackoff(base=" + base + ", max=" + max + ", maxRetries=" + maxRetries + ")";
    }
}
