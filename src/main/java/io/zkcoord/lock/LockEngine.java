package io.zkcoord.lock;

import io.zkcoord.SessionLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one lock (a mutex, or one side of a read/write lock) for the threads of this JVM: who holds
 * it, reentrancy, timeouts and interrupts, session loss. The ZooKeeper protocol itself is in
 * {@link LockRecipe}.
 *
 * <p>Thread-safe. {@link #holds} is a concurrent map from each holding thread to its {@link Hold};
 * only that thread adds or removes its entry. Loss is marked on the hold by the session-end hook.
 */
final class LockEngine {

    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);
    private final ZkClient client;
    private final String path;
    private final NodeKind kind;
    private final LockRecipe recipe;
    private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();
    private final List<LockLossListener> lossListeners = new CopyOnWriteArrayList<>();
    /** The public lock, passed to loss listeners. Set once, before any use. */
    private ZkLock face;
    /** The other side of a read/write lock, or null for a mutex. Set once, before any use. */
    private LockEngine partner;

    LockEngine(ZkClient client, String path, NodeKind kind) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        this.client = client;
        this.path = LockPaths.validate(path);
        this.kind = kind;
        this.recipe = new LockRecipe(client, path, kind);
    }

    void bind(ZkLock face, LockEngine partner) {
        this.face = face;
        this.partner = partner;
    }

    String path() {
        return path;
    }

    /**
     * Acquires for the current thread.
     *
     * @param timeoutNanos how long to wait, ZooKeeper calls included; zero or less: one look;
     *     {@link Acquisition#FOREVER}: no limit
     * @param interruptible whether an interrupt ends the wait
     * @return true if held, false if the time ran out
     */
    boolean acquire(long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + describe());
        }
        ensureOpen();
        Thread me = Thread.currentThread();
        Hold mine = holds.get(me);
        if (mine != null) {
            if (mine.isLost()) {
                throw new IllegalMonitorStateException("the hold of " + describe() + " by " + me.getName()
                        + " was lost with its session; unlock() it before acquiring again");
            }
            mine.count++;
            return true;
        }
        if (kind == NodeKind.WRITE && partner.holds.containsKey(me)) {
            throw new IllegalMonitorStateException(me.getName() + " holds the read lock of " + path
                    + " and asks for the write lock: an upgrade would wait for its own read forever");
        }
        // A thread holding the write lock takes the read lock at once (downgrade).
        Hold downgradeFrom = kind == NodeKind.READ && partner.isHeldBy(me) ? partner.holds.get(me) : null;
        Acquisition acquisition = new Acquisition(interruptible, timeoutNanos);
        try {
            for (;;) {
                // After a session loss the client may still be building the next session: a timed
                // acquisition waits for it only until its deadline.
                ZkSession session = acquisition.bounded()
                        ? acquisition.run(() -> client.session(acquisition.remaining())).orElse(null)
                        : acquisition.run(client::session);
                if (session == null) {
                    return false;
                }
                LockRecipe.Enqueued own = null;
                LockRecipe.Outcome outcome;
                boolean downgraded = false;
                try {
                    own = recipe.enqueue(session, acquisition);
                    // The downgrade is granted only while the write hold's session is the one the read
                    // node was made in; a write hold lost meanwhile gives no right to skip the queue.
                    downgraded = downgradeFrom != null && own.session() == downgradeFrom.session
                            && !downgradeFrom.isLost();
                    outcome = downgraded ? LockRecipe.Outcome.HELD : recipe.awaitTurn(own, acquisition);
                } catch (SessionLostException e) {
                    // The session ended (lost, or the client closed) during one of the calls: any node
                    // of ours went with it, exactly as when the wait sees it gone.
                    outcome = LockRecipe.Outcome.GONE;
                } catch (Acquisition.DeadlinePassed e) {
                    // ZooKeeper did not answer in time: as a timeout, without a node left behind.
                    outcome = LockRecipe.Outcome.TIMED_OUT;
                } catch (InterruptedException | RuntimeException e) {
                    if (own != null) {
                        recipe.abandon(own);
                    }
                    throw e;
                }
                // A downgraded read carries the write hold's token: its own node was created after
                // any writer queued behind the write node, so its czxid would exceed that writer's
                // token, and the resource would refuse the writer once the read hold had written.
                if (outcome == LockRecipe.Outcome.HELD
                        && grant(me, own, downgraded ? downgradeFrom.fencingToken : own.czxid())) {
                    return true;
                }
                if (outcome == LockRecipe.Outcome.TIMED_OUT) {
                    if (own != null) {
                        recipe.abandon(own);
                    }
                    return false;
                }
                // GONE (or granted on a session that ended at that moment): the node went with its
                // session, or was deleted by hand: queue again.
                ensureOpen();
                if (acquisition.expired()) {
                    return false;
                }
                log.info("{}: node {} of {} is gone (session {}); queueing again", me.getName(),
                        own == null ? "(being created)" : own.path(), describe(), session);
            }
        } finally {
            acquisition.restore();
        }
    }

    /**
     * Records the hold, unless its session ended after the queue said "held": then the node is
     * gone and the caller queues again.
     *
     * @return true if the thread now holds the lock
     */
    private boolean grant(Thread me, LockRecipe.Enqueued own, long fencingToken) {
        Hold hold = new Hold(own.session(), own.path(), own.node(), fencingToken);
        hold.lossHook(own.session().onEnd(() -> lost(hold)));
        if (!hold.grant()) {
            return false;
        }
        holds.put(me, hold);
        if (log.isDebugEnabled()) {
            log.debug("{} holds {} with {} (token {})", me.getName(), describe(), own.path(), fencingToken);
        }
        return true;
    }

    /** Session-end hook of a hold. */
    private void lost(Hold hold) {
        if (!hold.markLost()) {
            return;
        }
        log.warn("hold of {} with {} (token {}) lost: its session {} ended", describe(), hold.nodePath,
                hold.fencingToken, hold.session);
        for (LockLossListener l : lossListeners) {
            try {
                l.lockLost(face, hold.fencingToken);
            } catch (RuntimeException e) {
                log.error("loss listener {} of {} failed", l, describe(), e);
            }
        }
    }

    /** Releases one hold of the current thread; the last release deletes the node. */
    void release() {
        Thread me = Thread.currentThread();
        Hold hold = holds.get(me);
        if (hold == null) {
            throw new IllegalMonitorStateException(me.getName() + " does not hold " + describe());
        }
        if (--hold.count > 0) {
            return;
        }
        holds.remove(me);
        hold.cancelLossHook();
        if (hold.isLost()) {
            log.warn("{} released {} whose hold (token {}) was already lost; nothing to delete", me.getName(),
                    describe(), hold.fencingToken);
            return;
        }
        if (!hold.session.isAlive()) {
            return; // the client is closing: the node goes with the session
        }
        if (kind == NodeKind.WRITE) {
            Hold read = partner.holds.get(me);
            if (read != null && !read.isLost() && recipe.exclusiveBetween(hold.session, hold.node, read.node)) {
                // Downgraded, and a writer queued between this write node and the read node: keep the
                // write node until the read hold ends, or that writer would get in beside the reader.
                read.trailingNode = hold.nodePath;
                return;
            }
        }
        recipe.release(hold.session, hold.nodePath, hold.trailingNode);
    }

    boolean isHeldByCurrentThread() {
        return isHeldBy(Thread.currentThread());
    }

    private boolean isHeldBy(Thread thread) {
        Hold hold = holds.get(thread);
        return hold != null && !hold.isLost();
    }

    long fencingToken() {
        Hold hold = holds.get(Thread.currentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException(Thread.currentThread().getName() + " does not hold " + describe());
        }
        return hold.fencingToken;
    }

    void addLossListener(LockLossListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        lossListeners.add(listener);
    }

    private void ensureOpen() {
        if (client.isClosed()) {
            throw new IllegalStateException("cannot acquire " + describe() + ": " + client + " is closed");
        }
    }

    String describe() {
        return (kind == NodeKind.LOCK ? "mutex " : kind.prefix() + " lock ") + path;
    }
}
