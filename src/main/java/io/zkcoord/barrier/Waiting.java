package io.zkcoord.barrier;

import io.zkcoord.internal.ClientServices;
import io.zkcoord.queue.Waits;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How a caller waits for a {@link NodeWait}: blocking with a deadline kept by its own timed wait
 * (never by a thread in I/O), or through a future. A wait that ends without its condition
 * (time, interrupt, cancel) is cancelled, and a blocking caller returns once the removal of its
 * watch is answered (at most {@link #CLEAN_UP_MILLIS} more). Stateless.
 */
final class Waiting {

    /** How long a caller whose time ran out waits at most for its watch's removal to be answered. */
    static final long CLEAN_UP_MILLIS = 200;

    /** How long a wait may take for its first look when given less (a zero timeout still looks once). */
    static final long FIRST_LOOK_NANOS = TimeUnit.SECONDS.toNanos(1);

    private Waiting() {
    }

    /** @return the timeout in nanoseconds, capped at {@link Waits#FOREVER} */
    static long nanos(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or more, was " + timeout);
        }
        try {
            return Math.min(timeout.toNanos(), Waits.FOREVER);
        } catch (ArithmeticException e) {
            return Waits.FOREVER;
        }
    }

    /**
     * @param starting the wait, once its first look was taken: null if the condition held already
     * @param timeout how long at most
     * @return whether the condition held in time
     */
    static boolean await(CompletableFuture<NodeWait> starting, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + nanos(timeout);
        NodeWait wait;
        try {
            // The first look is taken whatever the time given (at most a second more), so that
            // await(ZERO) on an open latch says true.
            long firstLook = Math.max(deadline - System.nanoTime(), FIRST_LOOK_NANOS);
            wait = starting.get(firstLook, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | InterruptedException e) {
            starting.thenAccept(w -> {
                if (w != null) {
                    w.cancel();
                }
            });
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            return false;
        } catch (ExecutionException e) {
            throw Waits.rethrow(e.getCause());
        }
        if (wait == null) {
            return true;
        }
        return awaitDone(wait, deadline);
    }

    /** Waits for {@code wait} until {@code deadline} (a {@link System#nanoTime()}); cancels it on time-out or interrupt. */
    static boolean awaitDone(NodeWait wait, long deadline) throws InterruptedException {
        try {
            try {
                wait.looked().get(Math.max(deadline - System.nanoTime(), FIRST_LOOK_NANOS), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // no answer to the first look: the deadline decides below
            }
            wait.done().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            settle(wait.cancel());
            return wait.done().isDone() && !wait.done().isCompletedExceptionally();
        } catch (InterruptedException e) {
            wait.cancel();
            throw e;
        } catch (ExecutionException e) {
            throw Waits.rethrow(e.getCause());
        } catch (CancellationException e) {
            return false;
        }
    }

    /** Waits a little for a removal to be answered, so that the caller returns with no watch left. */
    static void settle(CompletableFuture<Void> removal) {
        try {
            removal.get(CLEAN_UP_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // goes on in the background
        }
    }

    /**
     * @return a future completed (on a library thread) when the condition holds; cancelling it
     *     cancels the wait
     */
    static CompletableFuture<Void> async(CompletableFuture<NodeWait> starting, ClientServices services) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        starting.whenComplete((wait, failure) -> {
            if (failure != null) {
                services.userCallbacks().execute(() -> result.completeExceptionally(
                        failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                                ? failure.getCause() : failure));
                return;
            }
            if (wait == null) {
                services.userCallbacks().execute(() -> result.complete(null));
                return;
            }
            result.whenComplete((v, t) -> {
                if (result.isCancelled()) {
                    wait.cancel();
                }
            });
            wait.done().whenComplete((v, t) -> services.userCallbacks().execute(() -> {
                if (t == null) {
                    result.complete(null);
                } else {
                    result.completeExceptionally(t);
                }
            }));
        });
        return result;
    }
}
