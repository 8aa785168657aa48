package io.zkcoord.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a deadline, polling; fails with a message instead of hanging. */
public final class Await {

    private static final long POLL_MS = 10;

    private Await() {
    }

    /**
     * Polls {@code condition} about every 10 ms until it holds. Tests wait with this, never by
     * sleeping and hoping.
     *
     * @param what what is awaited, for the failure message
     * @param deadline how long to wait at most
     * @param condition the condition; polled on the calling thread
     * @throws AssertionError naming {@code what} if it still does not hold after {@code deadline},
     *     or if the thread is interrupted while waiting (its interrupt flag is set again)
     */
    public static void until(String what, Duration deadline, BooleanSupplier condition) {
        until(deadline, condition, () -> what);
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @throws AssertionError if it still does not hold after {@code timeout}
     */
    public static void until(Duration timeout, BooleanSupplier condition, String what) {
        until(timeout, condition, () -> what);
    }

    /** As {@link #until(Duration, BooleanSupplier, String)}, the message computed only on failure. */
    public static void until(Duration timeout, BooleanSupplier condition, Supplier<String> what) {
        try {
            if (!within(timeout, condition)) {
                throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what.get());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for: " + what.get(), e);
        }
    }

    /**
     * Polls {@code condition} until it holds or {@code timeout} has passed, for callers that handle
     * the timeout themselves (with a report of their own).
     *
     * @return whether it held within {@code timeout}
     */
    public static boolean within(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        return within(timeout, Duration.ofMillis(POLL_MS), condition);
    }

    /** As {@link #within(Duration, BooleanSupplier)}, polling every {@code poll} (for a condition costly to check). */
    public static boolean within(Duration timeout, Duration poll, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(poll.toMillis());
        }
        return true;
    }

    /**
     * Checks that {@code condition} keeps holding for the whole {@code window}, polling it: for the
     * few tests whose claim is an absence ("nothing is granted", "the leader stays"), where a
     * bounded observation is the thing under test.
     *
     * @throws AssertionError naming {@code what} the first time the condition does not hold
     */
    public static void holds(String what, Duration window, BooleanSupplier condition) {
        long end = System.nanoTime() + window.toNanos();
        do {
            if (!condition.getAsBoolean()) {
                throw new AssertionError("stopped holding within " + window.toMillis() + " ms: " + what);
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while observing: " + what, e);
            }
        } while (System.nanoTime() - end < 0);
    }
}
