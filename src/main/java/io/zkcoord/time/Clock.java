package io.zkcoord.time;

import java.util.concurrent.TimeUnit;

/**
 * The one source of elapsed time and of sleeping in zkcoord, so that tests can control time
 * instead of waiting for it.
 *
 * <p>Implementations must be thread-safe.
 */
public interface Clock {

    /** @return a monotonic time in nanoseconds, as {@link System#nanoTime()} */
    long nanoTime();

    /**
     * Sleeps for about {@code nanos} nanoseconds; returns at once when {@code nanos <= 0}.
     *
     * @param nanos how long to sleep
     * @throws InterruptedException if the thread is interrupted, with its interrupt status cleared
     */
    void sleep(long nanos) throws InterruptedException;

    /** @return the clock of the machine: {@link System#nanoTime()} and {@link Thread#sleep} */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}

/** The real clock. */
enum SystemClock implements Clock {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }
}
