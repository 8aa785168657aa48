package io.zkcoord.shedlock;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, polling; fails with a message instead of hanging. */
final class Await {

    private Await() {
    }

    /** Polls {@code condition} every 10 ms until it holds; fails naming {@code what} after {@code deadline}. */
    static void until(String what, Duration deadline, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + deadline.toMillis() + " ms: " + what);
            }
            pause();
        }
    }

    /** Checks that {@code condition} keeps holding for the whole {@code window}: for claims of absence. */
    static void holds(String what, Duration window, BooleanSupplier condition) {
        long end = System.nanoTime() + window.toNanos();
        do {
            if (!condition.getAsBoolean()) {
                throw new AssertionError("stopped holding within " + window.toMillis() + " ms: " + what);
            }
            pause();
        } while (System.nanoTime() - end < 0);
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
