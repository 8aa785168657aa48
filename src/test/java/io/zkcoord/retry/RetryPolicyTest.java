package io.zkcoord.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Delays, give-up points and argument checks of every {@link RetryPolicy}; pure, no server. */
class RetryPolicyTest {

    private static final Duration MS_50 = Duration.ofMillis(50);
    private static final Duration S_2 = Duration.ofSeconds(2);
    /** Too long to count in nanoseconds (about 292 years is the limit). */
    private static final Duration TOO_LONG = Duration.ofDays(365L * 1000);

    private static Duration delay(RetryPolicy p, int retries, Duration elapsed) {
        Optional<Duration> d = p.retryDelay(retries, elapsed);
        assertTrue(d.isPresent(), () -> p + " gave up at retry " + retries + ", elapsed " + elapsed);
        return d.get();
    }

    private static void assertGivesUp(RetryPolicy p, int retries, Duration elapsed) {
        assertEquals(Optional.empty(), p.retryDelay(retries, elapsed),
                () -> p + " should give up at retry " + retries + ", elapsed " + elapsed);
    }

    // ---------------------------------------------------------------- exponentialBackoff

    /** With the lowest jitter every delay is half its ceiling min(max, base * 2^n); the ceiling doubles up to the cap. */
    @Test
    void exponentialBackoffLowestJitterIsHalfTheDoublingCeiling() {
        RetryPolicy p = new ExponentialBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 10, () -> 0.0);
        long[] ceilingsMs = {100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000, 1000};
        for (int n = 0; n < ceilingsMs.length; n++) {
            assertEquals(Duration.ofMillis(ceilingsMs[n] / 2), delay(p, n, Duration.ZERO), "retry " + n);
        }
    }

    /** With the highest jitter (just under 1) every delay is just under its ceiling and never above it. */
    @Test
    void exponentialBackoffHighestJitterStaysAtOrBelowTheCeiling() {
        double almostOne = Math.nextDown(1.0);
        RetryPolicy p = new ExponentialBackoff(Duration.ofMillis(100), Duration.ofMillis(1000), 10, () -> almostOne);
        long[] ceilingsMs = {100, 200, 400, 800, 1000, 1000};
        for (int n = 0; n < ceilingsMs.length; n++) {
            Duration d = delay(p, n, Duration.ZERO);
            Duration ceiling = Duration.ofMillis(ceilingsMs[n]);
            assertTrue(d.compareTo(ceiling) <= 0, "retry " + n + ": " + d + " > " + ceiling);
            assertTrue(ceiling.minus(d).compareTo(Duration.ofNanos(2)) <= 0, "retry " + n + ": " + d + " far below " + ceiling);
        }
    }

    /** The real (random) jitter keeps every delay in [ceiling/2, ceiling] and actually varies. */
    @Test
    void exponentialBackoffRandomJitterStaysInRange() {
        RetryPolicy p = RetryPolicy.exponentialBackoff(Duration.ofMillis(10), Duration.ofMillis(300), 100);
        List<Duration> firstRetry = new ArrayList<>();
        for (int round = 0; round < 200; round++) {
            for (int n = 0; n < 12; n++) {
                long ceiling = Math.min(300, 10L << n);
                Duration d = delay(p, n, Duration.ZERO);
                assertTrue(d.compareTo(Duration.ofMillis(ceiling).dividedBy(2)) >= 0, "retry " + n + ": " + d);
                assertTrue(d.compareTo(Duration.ofMillis(ceiling)) <= 0, "retry " + n + ": " + d);
                if (n == 0) {
                    firstRetry.add(d);
                }
            }
        }
        assertTrue(firstRetry.stream().distinct().count() > 10, "jitter does not vary: " + firstRetry);
    }

    /** The cap holds for huge retry counts (no overflow of base * 2^n). */
    @Test
    void exponentialBackoffCapsHugeRetryCounts() {
        RetryPolicy p = new ExponentialBackoff(Duration.ofMillis(1), S_2, Integer.MAX_VALUE, () -> 0.0);
        assertEquals(Duration.ofSeconds(1), delay(p, 62, Duration.ZERO));
        assertEquals(Duration.ofSeconds(1), delay(p, 64, Duration.ZERO));
        assertEquals(Duration.ofSeconds(1), delay(p, Integer.MAX_VALUE - 1, Duration.ZERO));
        RetryPolicy bigMax = new ExponentialBackoff(Duration.ofSeconds(3), Duration.ofDays(365L * 200), 1000, () -> 0.0);
        assertEquals(Duration.ofDays(365L * 200).dividedBy(2), delay(bigMax, 999, Duration.ZERO));
    }

    /** maxRetries retries are allowed (retriesSoFar 0 .. maxRetries-1), then it gives up; elapsed time does not matter. */
    @Test
    void exponentialBackoffGivesUpAfterMaxRetries() {
        RetryPolicy p = RetryPolicy.exponentialBackoff(MS_50, S_2, 3);
        delay(p, 0, Duration.ofDays(1));
        delay(p, 2, Duration.ofDays(1));
        assertGivesUp(p, 3, Duration.ZERO);
        assertGivesUp(p, 4, Duration.ZERO);
        assertGivesUp(RetryPolicy.exponentialBackoff(MS_50, S_2, 0), 0, Duration.ZERO);
    }

    /** base equal to max is allowed and gives delays in [max/2, max]. */
    @Test
    void exponentialBackoffBaseEqualToMax() {
        RetryPolicy p = new ExponentialBackoff(S_2, S_2, 5, () -> 0.0);
        assertEquals(Duration.ofSeconds(1), delay(p, 0, Duration.ZERO));
        assertEquals(Duration.ofSeconds(1), delay(p, 4, Duration.ZERO));
    }

    /** Null, zero or negative base/max, max below base, negative maxRetries, and durations too long are rejected. */
    @Test
    void exponentialBackoffValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(null, S_2, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(Duration.ZERO, S_2, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50.negated(), S_2, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50, null, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50, Duration.ZERO, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50, S_2.negated(), 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(S_2, MS_50, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50, S_2, -1));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(MS_50, TOO_LONG, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(TOO_LONG, TOO_LONG, 3));
    }

    // ---------------------------------------------------------------- fixedDelay

    /** fixedDelay waits the same delay before each of maxRetries retries, whatever the elapsed time, then gives up. */
    @Test
    void fixedDelayRetriesMaxRetriesTimes() {
        RetryPolicy p = RetryPolicy.fixedDelay(Duration.ofMillis(100), 3);
        for (int n = 0; n < 3; n++) {
            assertEquals(Duration.ofMillis(100), delay(p, n, Duration.ofHours(n)));
        }
        assertGivesUp(p, 3, Duration.ZERO);
        assertGivesUp(p, Integer.MAX_VALUE, Duration.ZERO);
        assertEquals(Duration.ZERO, delay(RetryPolicy.fixedDelay(Duration.ZERO, 1), 0, Duration.ZERO));
        assertGivesUp(RetryPolicy.fixedDelay(Duration.ofMillis(100), 0), 0, Duration.ZERO);
    }

    /** fixedDelay rejects a null, negative or too long delay and negative maxRetries; zero delay is allowed. */
    @Test
    void fixedDelayValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.fixedDelay(null, 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.fixedDelay(Duration.ofNanos(-1), 3));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.fixedDelay(MS_50, -1));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.fixedDelay(TOO_LONG, 3));
        RetryPolicy.fixedDelay(Duration.ZERO, 0);
    }

    // ---------------------------------------------------------------- untilElapsed

    /** untilElapsed retries with its delay as long as the next try would start within maxElapsed, whatever the count. */
    @Test
    void untilElapsedGivesUpByElapsedTime() {
        RetryPolicy p = RetryPolicy.untilElapsed(Duration.ofSeconds(1), Duration.ofMillis(200));
        assertEquals(Duration.ofMillis(200), delay(p, 0, Duration.ZERO));
        assertEquals(Duration.ofMillis(200), delay(p, 1_000_000, Duration.ofMillis(799)));
        assertEquals(Duration.ofMillis(200), delay(p, 4, Duration.ofMillis(800)));
        assertGivesUp(p, 4, Duration.ofMillis(801));
        assertGivesUp(p, 0, Duration.ofSeconds(1));
        assertGivesUp(p, 0, Duration.ofHours(1));
        RetryPolicy noDelay = RetryPolicy.untilElapsed(Duration.ofSeconds(1), Duration.ZERO);
        assertEquals(Duration.ZERO, delay(noDelay, 0, Duration.ofMillis(999)));
        assertEquals(Duration.ZERO, delay(noDelay, 0, Duration.ofSeconds(1)));
        assertGivesUp(noDelay, 0, Duration.ofMillis(1001));
    }

    /** untilElapsed rejects a null, zero or negative maxElapsed and a null or negative delay. */
    @Test
    void untilElapsedValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(null, MS_50));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(Duration.ZERO, MS_50));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(S_2.negated(), MS_50));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(S_2, null));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(S_2, MS_50.negated()));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.untilElapsed(TOO_LONG, MS_50));
        RetryPolicy.untilElapsed(S_2, Duration.ZERO);
    }

    // ---------------------------------------------------------------- forever, none, default

    /** forever never gives up, however many retries and however long. */
    @Test
    void foreverNeverGivesUp() {
        RetryPolicy p = RetryPolicy.forever(MS_50);
        for (int n : new int[] {0, 1, 10, 1_000_000, Integer.MAX_VALUE - 1, Integer.MAX_VALUE}) {
            assertEquals(MS_50, delay(p, n, Duration.ofDays(365)));
        }
        assertEquals(Duration.ZERO, delay(RetryPolicy.forever(Duration.ZERO), 7, Duration.ZERO));
    }

    /** forever rejects a null, negative or too long delay. */
    @Test
    void foreverValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.forever(null));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.forever(MS_50.negated()));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.forever(TOO_LONG));
    }

    /** none gives up at the first failure. */
    @Test
    void noneNeverRetries() {
        assertGivesUp(RetryPolicy.none(), 0, Duration.ZERO);
        assertGivesUp(RetryPolicy.none(), 1, Duration.ZERO);
    }

    /** The documented default is exponentialBackoff(50 ms, 2 s, 10): delays in range, capped at 2 s, 10 retries. */
    @Test
    void defaultPolicyIsTheDocumentedBackoff() {
        RetryPolicy p = RetryPolicy.defaultPolicy();
        for (int n = 0; n < 10; n++) {
            long ceiling = Math.min(2000, 50L << n);
            Duration d = delay(p, n, Duration.ZERO);
            assertTrue(d.compareTo(Duration.ofMillis(ceiling).dividedBy(2)) >= 0 && d.compareTo(Duration.ofMillis(ceiling)) <= 0,
                    "retry " + n + ": " + d);
        }
        assertGivesUp(p, 10, Duration.ZERO);
    }

    /** toString names the policy and its settings, for error messages. */
    @Test
    void toStringNamesThePolicy() {
        assertTrue(RetryPolicy.exponentialBackoff(MS_50, S_2, 3).toString().startsWith("exponentialBackoff("));
        assertTrue(RetryPolicy.fixedDelay(MS_50, 3).toString().startsWith("fixedDelay("));
        assertTrue(RetryPolicy.untilElapsed(S_2, MS_50).toString().startsWith("untilElapsed("));
        assertTrue(RetryPolicy.forever(MS_50).toString().startsWith("forever("));
        assertEquals("none()", RetryPolicy.none().toString());
    }
}
