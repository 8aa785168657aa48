package io.zkcoord.test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, polling: never "sleep and hope". */
final class Eventually {

    private Eventually() {
    }

    /** Returns once {@code condition} holds; fails naming {@code what} if it does not within {@code within}. */
    static void until(Duration within, BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("not within " + within.toMillis() + " ms: " + what);
            }
            Thread.sleep(20);
        }
    }
}
