package io.zkcoord.testing;

import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Clock} whose time moves only when told, so tests of timeouts need not wait for them.
 *
 * <ul>
 *   <li>{@link #nanoTime()} starts at an arbitrary non-zero value and changes only through {@link
 *       #advance(Duration)} and {@link #sleep(long)}.
 *   <li>{@link #sleep(long)} <b>does not sleep</b>: it records the requested duration (see {@link
 *       #sleeps()}) and advances the time by it, then returns at once. Code that sleeps between
 *       retries therefore runs its whole schedule immediately, and the test reads the schedule
 *       back. As {@link Clock#sleep} requires, it throws {@link InterruptedException} (clearing the
 *       flag) if the calling thread is interrupted.
 *   <li>{@link #reads()} counts calls of {@link #nanoTime()}, so a test can wait until a periodic
 *       task has looked at the time again instead of sleeping and hoping it ran.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ManualClock implements Clock {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicLong reads = new AtomicLong();
    private final List<Duration> sleeps = new ArrayList<>(); // guarded by this

    @Override
    public long nanoTime() {
        reads.incrementAndGet();
        return nanos.get();
    }

    /**
     * Records the sleep and advances the time by {@code nanos} (if positive) without blocking.
     *
     * @throws InterruptedException if the calling thread is interrupted; its flag is cleared
     */
    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before a ManualClock sleep of " + nanos + " ns");
        }
        synchronized (this) {
            sleeps.add(Duration.ofNanos(nanos));
        }
        if (nanos > 0) {
            this.nanos.addAndGet(nanos);
        }
    }

    /**
     * Moves the time forward.
     *
     * @throws IllegalArgumentException if {@code d} is null or negative
     */
    public void advance(Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException("cannot advance by " + d);
        }
        nanos.addAndGet(d.toNanos());
    }

    /** @return every duration passed to {@link #sleep(long)} so far, oldest first */
    public synchronized List<Duration> sleeps() {
        return List.copyOf(sleeps);
    }

    /** @return the sum of every positive sleep so far */
    public synchronized Duration slept() {
        return sleeps.stream().filter(d -> !d.isNegative()).reduce(Duration.ZERO, Duration::plus);
    }

    /** @return how many times {@link #nanoTime()} has been called */
    public long reads() {
        return reads.get();
    }

    @Override
    public String toString() {
        return "ManualClock[" + nanos.get() + " ns]";
    }
}
