package io.zkcoord.retry;

import java.time.Duration;
import java.util.Optional;

/**
 * Decides whether a ZooKeeper operation that failed for a passing reason (connection loss, an
 * operation timeout, a session that moved to another server) is tried again, and after how long.
 *
 * <p>A policy is a pure function of how many retries were already made and how long the operation
 * has been running; it keeps no state, so one policy can serve every operation of a client.
 * {@link io.zkcoord.ZkClient.Builder} uses {@link #defaultPolicy()} unless told otherwise.
 *
 * <p>All policies made by the factories here are immutable and thread-safe.
 */
@FunctionalInterface
public interface RetryPolicy {

    /**
     * @param retriesSoFar how many retries were already made: 0 after the first failure
     * @param elapsed time since the operation's first try began
     * @return the delay before the next try, or empty to give up
     */
    Optional<Duration> retryDelay(int retriesSoFar, Duration elapsed);

    /**
     * Exponential backoff with jitter: the n-th retry waits a random time between half and all of
     * {@code min(max, base * 2^n)}.
     *
     * @param base the delay before the first retry (before jitter); positive
     * @param max the cap of any delay; at least {@code base}
     * @param maxRetries how many retries at most; zero or more
     * @return the policy, immutable and thread-safe
     * @throws IllegalArgumentException if an argument is null or out of range
     */
    static RetryPolicy exponentialBackoff(Duration base, Duration max, int maxRetries) {
        return new ExponentialBackoff(base, max, maxRetries, ExponentialBackoff.randomJitter());
    }

    /**
     * The same delay before each retry.
     *
     * @param delay the delay before every retry; zero or more
     * @param maxRetries how many retries at most; zero or more
     * @return the policy, immutable and thread-safe
     * @throws IllegalArgumentException if an argument is null or out of range
     */
    static RetryPolicy fixedDelay(Duration delay, int maxRetries) {
        return new FixedDelay(delay, maxRetries);
    }

    /**
     * Retries with a fixed delay as long as the next try would begin no later than {@code
     * maxElapsed} after the first one: it never sleeps past {@code maxElapsed}, so an operation
     * gives up at most {@code maxElapsed} plus the length of its last try after it began (a delay
     * longer than {@code maxElapsed} means no retry at all).
     *
     * @param maxElapsed give up once the next try would begin later than this after the first
     *     one; positive
     * @param delay the delay before every retry; zero or more
     * @return the policy, immutable and thread-safe
     * @throws IllegalArgumentException if an argument is null or out of range
     */
    static RetryPolicy untilElapsed(Duration maxElapsed, Duration delay) {
        return new UntilElapsed(maxElapsed, delay);
    }

    /**
     * Never gives up. Only for callers that would rather block than fail while the ensemble is
     * unreachable.
     *
     * @param delay the delay before every retry; zero or more
     * @return the policy, immutable and thread-safe
     * @throws IllegalArgumentException if the delay is null or negative
     */
    static RetryPolicy forever(Duration delay) {
        return new FixedDelay(delay, FixedDelay.UNLIMITED);
    }

    /** @return a policy that never retries: the first failure is final */
    static RetryPolicy none() {
        return new FixedDelay(Duration.ZERO, 0);
    }

    /**
     * The policy {@link io.zkcoord.ZkClient.Builder} uses when none is given:
     * {@code exponentialBackoff(50 ms, 2 s, 10)}, which rides out a leader election (a few
     * seconds) and gives up after roughly 10 to 30 seconds without a server.
     *
     * @return the default policy, immutable and thread-safe
     */
    static RetryPolicy defaultPolicy() {
        return exponentialBackoff(Duration.ofMillis(50), Duration.ofSeconds(2), 10);
    }
}
