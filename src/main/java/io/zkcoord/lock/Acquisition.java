package io.zkcoord.lock;

import java.time.Duration;

/**
 * How one acquisition waits: whether an interrupt ends it, and until when it may run.
 *
 * <p>Interruptible acquisitions let {@link InterruptedException} through. Uninterruptible ones
 * ({@code lock()}, {@code unlock()}) remember the interrupt, clear the flag before each blocking step
 * (ZooKeeper's synchronous calls would otherwise fail at once), and set it again when the
 * acquisition ends.
 *
 * <p>The deadline (by {@link System#nanoTime()}) covers the waits and the ZooKeeper calls: a call
 * is not tried again once it has passed ({@link #checkDeadline()}), so a timed {@code tryLock}
 * does not sit out the retry policy while the ensemble is unreachable.
 *
 * <p>Confined to the acquiring thread.
 */
final class Acquisition {

    /** Waits longer than this (73 years) are forever. */
    static final long FOREVER = Long.MAX_VALUE / 4;

    /** A blocking step that may be repeated after an interrupt. */
    @FunctionalInterface
    interface Step<T> {
        T run() throws InterruptedException;
    }

    /** The deadline passed during a ZooKeeper call or between its tries. */
    static final class DeadlinePassed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DeadlinePassed() {
            super("deadline passed", null, false, false);
        }
    }

    private final boolean interruptible;
    private final boolean bounded;
    private final long deadline;
    private boolean pending;

    /**
     * @param interruptible whether an interrupt ends the acquisition
     * @param timeoutNanos how long it may run; zero or less: one look; {@link #FOREVER}: no limit
     */
    Acquisition(boolean interruptible, long timeoutNanos) {
        this.interruptible = interruptible;
        this.bounded = timeoutNanos < FOREVER;
        this.deadline = System.nanoTime() + Math.min(Math.max(timeoutNanos, 0), FOREVER);
    }

    /** @return an uninterruptible acquisition with no deadline, for releases and clean-up */
    static Acquisition uninterruptible() {
        return new Acquisition(false, FOREVER);
    }

    boolean interruptible() {
        return interruptible;
    }

    /** @return the deadline, by {@link System#nanoTime()} */
    long deadline() {
        return deadline;
    }

    /** @return true if this acquisition has a deadline; false for {@code lock()} */
    boolean bounded() {
        return bounded;
    }

    /** @return the time left until the deadline; zero once it has passed */
    Duration remaining() {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /** @return true once the deadline has passed */
    boolean expired() {
        return deadline - System.nanoTime() <= 0;
    }

    /** @throws DeadlinePassed if the deadline has passed */
    void checkDeadline() {
        if (expired()) {
            throw new DeadlinePassed();
        }
    }

    /**
     * Runs {@code step}; when uninterruptible, repeats it after an interrupt. Only for steps that
     * are safe to repeat.
     */
    <T> T run(Step<T> step) throws InterruptedException {
        for (;;) {
            clearIfUninterruptible();
            try {
                return step.run();
            } catch (InterruptedException e) {
                if (interruptible) {
                    throw e;
                }
                pending = true;
            }
        }
    }

    /** Remembers and clears the interrupt flag, when uninterruptible. */
    void clearIfUninterruptible() {
        if (!interruptible && Thread.interrupted()) {
            pending = true;
        }
    }

    /** Records an interrupt that an uninterruptible wait absorbed. */
    void absorbed() {
        pending = true;
    }

    /** Sets the flag again if an interrupt was absorbed. Call once, when the acquisition ends. */
    void restore() {
        if (pending) {
            Thread.currentThread().interrupt();
        }
    }
}
