package io.zkcoord.lock;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.Observer;
import io.zkcoord.queue.QueueNode;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One thread's hold of one lock: its node, its fencing token, the session the node belongs to,
 * and how many times the thread has taken it.
 *
 * <p>{@link #count} and {@link #trailingNode} are touched only by the owning thread. Its state
 * ({@link #grant()}, {@link #markLost()}) changes by atomic steps: the owner grants, the
 * session-end hook (a library thread) marks it lost, and whichever comes first decides.
 */
final class Hold {

    final ZkSession session;
    /** Full path of the node that holds the lock (the first, for a multi-lock). */
    final String nodePath;
    /** Every node of the hold: one, or one per path of a multi-lock. */
    final List<String> nodePaths;
    final QueueNode node;
    final long fencingToken;
    /** The directories whose removal the release may try (see {@link io.zkcoord.queue.Grant#removableDirs()}). */
    final List<String> removableDirs;
    /** Reports the hold to the client's coordination listeners and Flight Recorder. */
    final Observer.Held observed;

    /** Reentrant count. Owner thread only. */
    int count = 1;
    /**
     * A write node kept after a downgrade until this read hold ends, because a writer queued
     * between the write node and this read node (see {@link ZkReadWriteLock}). Owner thread only.
     */
    String trailingNode;

    /**
     * The life of a hold. {@code PENDING -> GRANTED -> LOST}, or {@code PENDING -> LOST} when the
     * session ended before the owner could be told it holds: then nobody is told of a loss, and the
     * owner queues again.
     */
    private enum State { PENDING, GRANTED, LOST }

    private final AtomicReference<State> state = new AtomicReference<>(State.PENDING);
    /** Cancels the session-end hook; set once, right after construction, by the owner thread. */
    private Runnable cancelLossHook = () -> { };

    Hold(ZkSession session, List<String> nodePaths, QueueNode node, long fencingToken, List<String> removableDirs,
            Observer.Held observed) {
        this.session = session;
        this.removableDirs = List.copyOf(removableDirs);
        this.nodePaths = List.copyOf(nodePaths);
        this.nodePath = this.nodePaths.get(0);
        this.node = node;
        this.fencingToken = fencingToken;
        this.observed = observed;
    }

    void lossHook(Runnable cancel) {
        this.cancelLossHook = cancel;
    }

    void cancelLossHook() {
        cancelLossHook.run();
    }

    /** @return true if the hold is now granted; false if its session ended first */
    boolean grant() {
        return state.compareAndSet(State.PENDING, State.GRANTED);
    }

    /** @return true the first time a granted hold is lost: the caller reports the loss */
    boolean markLost() {
        State previous = state.getAndSet(State.LOST);
        return previous == State.GRANTED;
    }

    boolean isLost() {
        return state.get() == State.LOST;
    }
}
