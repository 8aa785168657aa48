package io.zkcoord.lock;

import io.zkcoord.ZkSession;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One thread's hold of one lock: its node, its fencing token, the session the node belongs to,
 * and how many times the thread has taken it.
 *
 * <p>{@link #count} and {@link #trailingNode} are touched only by the owning thread. {@link #lost}
 * is set by the session-end hook (a library thread) and read by anyone.
 */
final class Hold {

    final ZkSession session;
    /** Full path of the node that holds the lock. */
    final String nodePath;
    final LockNode node;
    final long fencingToken;

    /** Reentrant count. Owner thread only. */
    int count = 1;
    /**
     * A write node kept after a downgrade until this read hold ends, because a writer queued
     * between the write node and this read node (see {@link ZkReadWriteLock}). Owner thread only.
     */
    String trailingNode;

    private final AtomicBoolean lost = new AtomicBoolean();
    /** Cancels the session-end hook; set once, right after construction, by the owner thread. */
    private Runnable cancelLossHook = () -> { };

    Hold(ZkSession session, String nodePath, LockNode node, long fencingToken) {
        this.session = session;
        this.nodePath = nodePath;
        this.node = node;
        this.fencingToken = fencingToken;
    }

    void lossHook(Runnable cancel) {
        this.cancelLossHook = cancel;
    }

    void cancelLossHook() {
        cancelLossHook.run();
    }

    /** @return true the first time only: the caller reports the loss */
    boolean markLost() {
        return lost.compareAndSet(false, true);
    }

    boolean isLost() {
        return lost.get();
    }
}
