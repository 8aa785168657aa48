package io.zkcoord.retry;

import java.time.Duration;
import java.util.Optional;

/** See {@link RetryPolicy#untilElapsed}. Immutable. */
final class UntilElapsed implements RetryPolicy {

    private final Duration maxElapsed;
    private final Duration delay;

    UntilElapsed(Duration maxElapsed, Duration delay) {
        this.maxElapsed = Durations.requirePositive(maxElapsed, "maxElapsed");
        this.delay = Durations.requireNonNegative(delay, "delay");
    }

    @Override
    public Optional<Duration> retryDelay(int retriesSoFar, Duration elapsed) {
        return elapsed.plus(delay).compareTo(maxElapsed) <= 0 ? Optional.of(delay) : Optional.empty();
    }

    @Override
    public String toString() {
        return "untilElapsed(maxElapsed=" + maxElapsed + ", delay=" + delay + ")";
    }
}
