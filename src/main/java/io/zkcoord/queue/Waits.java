package io.zkcoord.queue;

import io.zkcoord.CoordinationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * How a blocking method waits for an {@link Acquisition}: with its own deadline, kept by this
 * thread's timed wait and never by a thread stuck in I/O, so the limit holds whatever the network
 * does. Stateless.
 */
public final class Waits {

    /** Waits longer than this (73 years) are forever. */
    public static final long FOREVER = Long.MAX_VALUE / 4;

    /**
     * How long a one-look acquisition ({@code tryLock()}, {@code tryAcquire(ZERO)}) waits for its
     * one look (one round trip when the ensemble answers) before it gives up; with what may come
     * after ({@link #LATE_BUDGET_NANOS}) at most 780 ms in all.
     */
    public static final long ONE_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(600);

    /**
     * All a timed wait may add after its deadline: a first look not yet answered, then the
     * abandoned node's deletion. Keeps "time + 200 ms" with room for scheduling.
     */
    static final long LATE_BUDGET_NANOS = TimeUnit.MILLISECONDS.toNanos(180);

    /**
     * A timed acquisition whose time runs out before its first look was answered (a time shorter
     * than one round trip) waits this much longer for that look, so that {@code tryLock(1 ms)} on a
     * free lock holds it.
     */
    static final long FIRST_LOOK_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(80);

    /**
     * After giving up, how long to wait at most for the abandoned node's deletion to be confirmed,
     * so that when the ensemble answers no node is left on return (one round trip), and when it
     * does not the time limit still holds (the deletion goes on in the background).
     */
    static final long CLEAN_UP_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** The same, after an interrupt, which is answered within 200 ms. */
    static final long INTERRUPT_CLEAN_UP_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private Waits() {
    }

    /**
     * Waits for {@code acquisition} until {@code timeoutNanos} has passed, then abandons it.
     *
     * @param timeoutNanos how long; {@link #FOREVER}: no limit
     * @param interruptible whether an interrupt ends the wait (the acquisition is abandoned);
     *     otherwise an interrupt is remembered and the flag set again on return
     * @param unwanted told of a grant that came too late for a caller that was interrupted
     * @return the grant, or null if the time ran out or the one look did not hold
     * @throws InterruptedException if interruptible and interrupted; the acquisition is abandoned
     * @throws CoordinationException if the acquisition failed so
     * @throws IllegalStateException if the client closed
     */
    public static Grant await(Acquisition acquisition, long timeoutNanos, boolean interruptible, Consumer<Grant> unwanted)
            throws InterruptedException {
        acquisition.waitedOn(); // its create, if still waiting for a slot, goes before a backlog of futures
        CompletableFuture<Grant> result = acquisition.result();
        long deadline = System.nanoTime() + Math.min(Math.max(timeoutNanos, 0), FOREVER);
        // Everything after the deadline (a look not yet answered, the abandoned node's deletion)
        // fits in this much more, so that a timed wait ends within its time + 200 ms.
        long limit = deadline + LATE_BUDGET_NANOS;
        boolean graceGiven = false;
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    if (timeoutNanos >= FOREVER) {
                        return result.get();
                    }
                    if (result.isDone() && !result.isCompletedExceptionally() && result.getNow(null) == null) {
                        return settle(acquisition, limit); // one look that did not hold
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0 && !graceGiven && !acquisition.looked()) {
                        graceGiven = true;
                        deadline += FIRST_LOOK_GRACE_NANOS;
                        continue;
                    }
                    if (remaining <= 0) {
                        if (!acquisition.abandon()) {
                            return result.join(); // granted at this instant: taken, not thrown away
                        }
                        if (result.isCompletedExceptionally()) {
                            result.get(); // failed just before: throws its failure, not a timeout
                        }
                        return settle(acquisition, limit);
                    }
                    Grant grant = result.get(remaining, TimeUnit.NANOSECONDS);
                    return grant != null ? grant : settle(acquisition, limit);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        if (!acquisition.abandon()) {
                            unwanted.accept(result.join());
                        } else {
                            settle(acquisition, System.nanoTime() + INTERRUPT_CLEAN_UP_WAIT_NANOS);
                            Thread.interrupted(); // thrown below: the status is cleared, as documented
                        }
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    // loop: the deadline branch abandons
                } catch (ExecutionException e) {
                    // Failed (say, a permit count that differs): its node, if any, is being deleted;
                    // when the ensemble answers it is gone on return, as after a timeout.
                    settle(acquisition, System.nanoTime() + CLEAN_UP_WAIT_NANOS);
                    throw rethrow(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits a little (at most {@link #CLEAN_UP_WAIT_NANOS}, never past {@code until}) for an
     * abandoned acquisition's clean-up, unless the client is disconnected (no answer can come);
     * returns null (not granted). An interrupt meanwhile ends the wait and stays set.
     */
    private static Grant settle(Acquisition acquisition, long until) {
        long wait = Math.min(CLEAN_UP_WAIT_NANOS, until - System.nanoTime());
        if (wait <= 0 || !acquisition.connected()) {
            return null;
        }
        try {
            acquisition.cleanedUp().get(wait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // goes on in the background
        }
        return null;
    }

    /**
     * Waits for {@code future} without a limit and without being ended by an interrupt (the flag
     * is set again on return).
     */
    public static <T> T uninterruptibly(CompletableFuture<T> future) {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrow(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the failure as the unchecked exception to throw */
    public static RuntimeException rethrow(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new CoordinationException(t.toString(), t);
    }
}
