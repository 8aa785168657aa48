package io.zkcoord.queue;

import io.zkcoord.ZkLease;
import io.zkcoord.internal.Observer;
import io.zkcoord.observe.Holder;
import io.zkcoord.observe.WaitOutcome;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * How every recipe hands out {@link ZkLease}s: the three ways to wait ({@code acquire()}, {@code
 * tryAcquire(Duration)}, {@code acquireAsync()}) over the same {@link Acquisition}. A recipe gives
 * its node kind, its rule, a host (its name, its queue, its loss listeners) and, optionally, a step
 * that must succeed before a node is queued (a semaphore checking its permit count).
 *
 * <p>Thread-safe; holds no state of its own.
 */
public final class Leases {

    private final QueueLease.Host host;
    private final String kind;
    private final QueueRule rule;
    private final Supplier<CompletableFuture<Void>> before;

    /**
     * @param host the recipe
     * @param kind the node kind of its leases
     * @param rule its rule
     * @param before completes once the recipe may queue (fails the acquisition, with no node made,
     *     if it fails); called for every acquisition, so it should be cheap once settled
     */
    public Leases(QueueLease.Host host, String kind, QueueRule rule, Supplier<CompletableFuture<Void>> before) {
        this.host = host;
        this.kind = kind;
        this.rule = rule;
        this.before = before;
    }

    /**
     * Acquires a lease, waiting at most {@code timeoutNanos} (zero or less: one look; {@link
     * Waits#FOREVER}: no limit).
     *
     * @return the lease, or empty if the time ran out
     * @throws InterruptedException if interrupted (status cleared); no node is left
     */
    public Optional<ZkLease> acquire(long timeoutNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + host.describe());
        }
        Observer.Wait observed = host.queue().services().observer().started(host.observedAs(Holder.LEASE));
        try {
            Optional<ZkLease> lease = queueUntilHeld(timeoutNanos, observed);
            if (lease.isEmpty()) {
                observed.timedOut();
            }
            return lease;
        } catch (Throwable t) {
            observed.failed(t);
            throw t;
        }
    }

    /** The queueing loop of {@link #acquire}: the lease, or empty when the time ran out. */
    private Optional<ZkLease> queueUntilHeld(long timeoutNanos, Observer.Wait observed) throws InterruptedException {
        boolean oneLook = timeoutNanos <= 0;
        long deadline = System.nanoTime() + (oneLook ? Waits.ONE_LOOK_NANOS : Math.min(timeoutNanos, Waits.FOREVER));
        if (!awaitBefore(timeoutNanos >= Waits.FOREVER ? Waits.FOREVER : deadline - System.nanoTime())) {
            return Optional.empty();
        }
        for (;;) {
            Acquisition acquisition = host.queue().acquire(kind, rule, oneLook);
            long wait = timeoutNanos >= Waits.FOREVER ? Waits.FOREVER : deadline - System.nanoTime();
            Grant grant = Waits.await(acquisition, wait, true, this::unwanted);
            if (grant == null) {
                return Optional.empty();
            }
            QueueLease lease = new QueueLease(host, grant, observed.granting(grant.czxid()));
            if (lease.grant()) {
                return Optional.of(lease);
            }
            // Granted on a session that ended at that moment: the node went with it; queue again.
            if (timeoutNanos < Waits.FOREVER && deadline - System.nanoTime() <= 0) {
                return Optional.empty();
            }
        }
    }

    /** @return false if the precondition did not complete in time */
    private boolean awaitBefore(long timeoutNanos) throws InterruptedException {
        CompletableFuture<Void> ready = before.get();
        try {
            if (timeoutNanos >= Waits.FOREVER) {
                ready.get();
            } else {
                ready.get(Math.max(0, timeoutNanos) + Waits.ONE_LOOK_NANOS / 4, TimeUnit.NANOSECONDS);
            }
            return true;
        } catch (ExecutionException e) {
            throw Waits.rethrow(e.getCause());
        } catch (TimeoutException e) {
            return false;
        }
    }

    /**
     * Acquires a lease without a waiting thread. Completing the returned future by any other means
     * (cancel, {@code orTimeout}, ...) abandons the acquisition; a lease granted at that instant is
     * released. A thread that blocks on the future until it completes ({@code get()}, {@code join()}: Spring's
     * {@code lock()} does) counts as blocked on the acquisition ({@link Acquisition#waitedOn}), as
     * a blocking {@code acquire()} does: its create goes before a backlog of futures nobody blocks on.
     */
    public CompletableFuture<ZkLease> acquireAsync() {
        AtomicReference<Acquisition> current = new AtomicReference<>();
        AtomicBoolean blockedOn = new AtomicBoolean();
        CompletableFuture<ZkLease> user = new AwaitedFuture<>(() -> {
            blockedOn.set(true);
            Acquisition a = current.get();
            if (a != null) {
                a.waitedOn();
            }
        });
        Observer.Wait observed = host.queue().services().observer().started(host.observedAs(Holder.LEASE));
        user.whenComplete((lease, failure) -> {
            // Abandoned first: no request of it is sent once the end is told. Nothing if granted or
            // failed before. A future ended by orTimeout (or completed with a TimeoutException by
            // the caller) is a timeout; any other completion is an abandon.
            Acquisition a = current.get();
            if (a != null) {
                a.abandon();
            }
            observed.ended(failure instanceof java.util.concurrent.TimeoutException ? WaitOutcome.TIMED_OUT
                    : WaitOutcome.ABANDONED);
        });
        before.get().whenComplete((v, failure) -> {
            if (failure != null) {
                host.queue().services().userCallbacks().execute(() -> {
                    observed.ended(WaitOutcome.FAILED);
                    user.completeExceptionally(Waits.rethrow(failure));
                });
            } else {
                start(user, current, blockedOn, observed);
            }
        });
        return user;
    }

    private void start(CompletableFuture<ZkLease> user, AtomicReference<Acquisition> current, AtomicBoolean blockedOn,
            Observer.Wait observed) {
        if (user.isDone()) {
            return;
        }
        Acquisition acquisition = host.queue().acquire(kind, rule, false);
        current.set(acquisition);
        if (user.isDone()) {
            acquisition.abandon();
            return;
        }
        if (blockedOn.get()) {
            acquisition.waitedOn(); // a thread blocked on the future before this acquisition began
        }
        acquisition.result().whenComplete((grant, failure) -> host.queue().services().userCallbacks().execute(() -> {
            if (failure != null) {
                // Told once its node (if any) is gone, or after a second: the failure is final either way.
                RuntimeException cause = Waits.rethrow(failure);
                acquisition.cleanedUp().copy().completeOnTimeout(null, 1, java.util.concurrent.TimeUnit.SECONDS)
                        .whenComplete((v, e) -> host.queue().services().userCallbacks().execute(() -> {
                            observed.ended(WaitOutcome.FAILED);
                            user.completeExceptionally(cause);
                        }));
            } else if (grant != null) {
                QueueLease lease = new QueueLease(host, grant, observed.granting(grant.czxid()));
                if (!lease.grant()) {
                    start(user, current, blockedOn, observed); // the session ended at that moment: queue again
                } else if (!user.complete(lease)) {
                    lease.releaseInBackground(); // the future was completed otherwise meanwhile
                }
            }
            // null: abandoned because the future was completed otherwise; nothing to do
        }));
    }

    /**
     * The future {@link #acquireAsync()} returns: a thread that blocks on it until it completes
     * ({@code get()}, {@code join()}) first tells the acquisition so ({@code onBlock}). A timed
     * {@code get} does not: its thread may go on to other futures, and the blocked lane stays as
     * short as the number of threads blocked. Dependent stages are plain futures.
     */
    private static final class AwaitedFuture<T> extends CompletableFuture<T> {
        private final Runnable onBlock;

        AwaitedFuture(Runnable onBlock) {
            this.onBlock = onBlock;
        }

        @Override
        public T get() throws InterruptedException, ExecutionException {
            blocking();
            return super.get();
        }

        @Override
        public T join() {
            blocking();
            return super.join();
        }

        private void blocking() {
            if (!isDone()) {
                onBlock.run();
            }
        }
    }

    /** A grant nobody will use (interrupted caller): its node goes in the background. */
    private void unwanted(Grant grant) {
        host.queue().deleteInBackground(grant);
    }
}
