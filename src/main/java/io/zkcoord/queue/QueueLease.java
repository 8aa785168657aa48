package io.zkcoord.queue;

import io.zkcoord.ZkLease;
import io.zkcoord.internal.Observer;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.Holder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease of any recipe: one granted node that belongs to this object, not to a thread.
 *
 * <p>Thread-safe. Its life is {@code PENDING -> VALID -> RELEASED | LOST}, changed by atomic steps:
 * {@code PENDING -> LOST} when the session ended before the lease was handed out (the acquisition
 * then queues again and nobody hears of it).
 */
public final class QueueLease implements ZkLease {

    private static final Logger log = LoggerFactory.getLogger(QueueLease.class);
    /** How long {@link #release()} waits for the ensemble's answer before leaving it to the background. */
    private static final long RELEASE_WAIT_MILLIS = 1_000;

    private enum State { PENDING, VALID, RELEASED, LOST }

    /** What a recipe tells a lease: its name for messages, its queue, and how to report a loss. */
    public interface Host {
        /** @return e.g. {@code mutex /locks/orders} */
        String describe();

        /** @return the queues the lease's nodes are in (one, except for a multi-lock) */
        QueueSet queue();

        /** Tells the recipe's loss listeners of a lost lease, then runs {@code andThen}, off ZooKeeper's threads. */
        void reportLoss(long fencingToken, Runnable andThen);

        /** @return what coordination listeners are told a wait or hold of {@code holder} is of */
        CoordinationEvent observedAs(Holder holder);
    }

    private final Host engine;
    private final Grant grant;
    private final AtomicReference<State> state = new AtomicReference<>(State.PENDING);
    private final CompletableFuture<Void> lost = new CompletableFuture<>();
    private final Runnable cancelLossHook;
    private final Observer.Held observed;

    QueueLease(Host engine, Grant grant, Observer.Held observed) {
        this.engine = engine;
        this.grant = grant;
        this.observed = observed;
        this.cancelLossHook = grant.session().onEnd(this::sessionEnded);
    }

    /** @return true if the lease is now valid; false if its session ended first */
    boolean grant() {
        if (!grant.session().isAlive()) {
            cancelLossHook.run(); // a handle that stopped (expired, not yet reported) grants nothing
            return false;
        }
        boolean granted = state.compareAndSet(State.PENDING, State.VALID);
        if (granted) {
            observed.granted();
        }
        return granted;
    }

    private void sessionEnded() {
        State was = state.getAndUpdate(s -> s == State.RELEASED ? s : State.LOST);
        if (was != State.VALID) {
            return;
        }
        observed.lost();
        log.warn("lease of {} with {} (token {}) lost: its session {} ended", engine.describe(), grant.path(),
                grant.czxid(), grant.session());
        engine.reportLoss(grant.czxid(), () -> lost.complete(null));
    }

    @Override
    public long fencingToken() {
        return grant.czxid();
    }

    @Override
    public String nodePath() {
        return grant.path();
    }

    @Override
    public boolean isValid() {
        return state.get() == State.VALID;
    }

    @Override
    public CompletableFuture<Void> whenLost() {
        return lost.copy();
    }

    @Override
    public java.util.List<org.apache.zookeeper.OpResult> commitIfHeld(Iterable<org.apache.zookeeper.Op> ops) {
        State now = state.get();
        if (now != State.VALID) {
            throw new io.zkcoord.LockLostException("the lease of " + engine.describe() + " with " + grant.path() + " was "
                    + (now == State.RELEASED ? "released" : "lost") + "; nothing applied");
        }
        return GuardedCommit.commit(grant.session(), grant.paths(), ops);
    }

    @Override
    public void release() {
        CompletableFuture<Void> deleted = releaseInBackground();
        boolean interrupted = Thread.interrupted();
        try {
            deleted.get(RELEASE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
        } catch (Exception e) {
            // Not answered within the wait, or the policy gave up: the queue keeps deleting in the
            // background until the connection returns or the session ends.
            log.warn("release of {} ({}) not confirmed yet; it goes on in the background: {}", engine.describe(),
                    grant.path(), e.toString());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Ends the lease and sends the deletion without waiting for it.
     *
     * @return completes when the node is deleted (at once if the lease was not valid)
     */
    public CompletableFuture<Void> releaseInBackground() {
        if (!state.compareAndSet(State.VALID, State.RELEASED)) {
            return CompletableFuture.completedFuture(null);
        }
        observed.released();
        cancelLossHook.run();
        return engine.queue().release(grant);
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "ZkLease[" + engine.describe() + ", " + grant.path() + ", token " + grant.czxid() + ", " + state.get() + "]";
    }
}
