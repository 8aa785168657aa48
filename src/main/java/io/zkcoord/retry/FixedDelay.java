package io.zkcoord.retry;

import java.time.Duration;
import java.util.Optional;

/** See {@link RetryPolicy#fixedDelay}, {@link RetryPolicy#forever} and {@link RetryPolicy#none}. Immutable. */
final class FixedDelay implements RetryPolicy {

    static final int UNLIMITED = Integer.MAX_VALUE;

    private final Duration delay;
    private final int maxRetries;

    FixedDelay(Duration delay, int maxRetries) {
        this.delay = Durations.requireNonNegative(delay, "delay");
        this.maxRetries = Durations.requireRetries(maxRetries);
    }

    @Override
    public Optional<Duration> retryDelay(int retriesSoFar, Duration elapsed) {
        return maxRetries == UNLIMITED || retriesSoFar < maxRetries ? Optional.of(delay) : Optional.empty();
    }

    @Override
    public String toString() {
        if (maxRetries == UNLIMITED) {
            return "forever(delay=" + delay + ")";
        }
        return maxRetries == 0 ? "none()" : "fixedDelay(delay=" + delay + ", maxRetries=" + maxRetries + ")";
    }
}
