package io.zkcoord.barrier;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.once.PathWatches;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiter's wait for one node to exist, or to be gone: the one kind of wait every latch and
 * barrier here is made of.
 * <ul>
 *   <li><b>One watch.</b> Each check is one request that sets this wait's own watcher ({@code
 *       getData} to wait for a node to go, which sets none on a missing node; {@code exists} to
 *       wait for one to come). A wait ends only on the ensemble's word that the condition holds:
 *       a read that says so, or the very event (the node deleted, the node created). Any other
 *       wake-up (a data change, a reconnection, a session's end) checks again.
 *   <li><b>Across sessions.</b> When the session ends, the watch is gone with it: the wait checks
 *       again in the next session.
 *   <li><b>Nothing left.</b> {@link #cancel()} removes the watch: from the server when no other
 *       watcher of the client still watches that node ({@link PathWatches}), else on the client
 *       only. A wait that ended by its event holds no watch anyway; one that ended on a read that
 *       set a watch removes it the same way.
 * </ul>
 * Connection losses are retried under the client's retry policy; when it gives up the wait fails
 * with {@link CoordinationException}.
 *
 * <p>Thread-safe. Steps run on ZooKeeper's event thread and the client's scheduler.
 */
final class NodeWait implements Watcher {

    private static final Logger log = LoggerFactory.getLogger(NodeWait.class);

    private final ClientServices services;
    private final String path;
    private final boolean untilPresent;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final CompletableFuture<Void> looked = new CompletableFuture<>();
    private final long startNanos = System.nanoTime();

    // Guarded by this.
    private ZkSession session;
    /** Whether an {@code exists} with this watcher was answered without the condition holding: the watch is set. */
    private boolean watching;
    private int retries;
    private boolean left;

    private NodeWait(ClientServices services, String path, boolean untilPresent) {
        this.services = services;
        this.path = path;
        this.untilPresent = untilPresent;
        PathWatches.of(services).join(path);
    }

    /** @return a started wait for {@code path} to be gone */
    static NodeWait untilGone(ClientServices services, String path) {
        NodeWait w = new NodeWait(services, path, false);
        w.check();
        return w;
    }

    /** @return a started wait for {@code path} to exist */
    static NodeWait untilPresent(ClientServices services, String path) {
        NodeWait w = new NodeWait(services, path, true);
        w.check();
        return w;
    }

    /** @return completes when the condition was seen to hold; exceptionally if the wait failed or the client closed */
    CompletableFuture<Void> done() {
        return done;
    }

    /** @return completes once the first check was answered (or the wait ended) */
    CompletableFuture<Void> looked() {
        return looked;
    }

    /**
     * Stops waiting and removes the watch; does nothing if the wait is over.
     *
     * @return completes once the removal is answered (or at once if there was nothing to remove)
     */
    CompletableFuture<Void> cancel() {
        ZkSession s;
        synchronized (this) {
            if (done.isDone()) {
                return CompletableFuture.completedFuture(null);
            }
            done.cancel(false);
            s = session;
            watching = false;
        }
        CompletableFuture<Void> removed = new CompletableFuture<>();
        // A check may be in flight: the removal, sent after it on the same session, is applied after it.
        leave(s != null && s.isAlive() ? s : null, true, () -> removed.complete(null));
        return removed;
    }

    /** Leaves the client's count of this path's watchers, once, removing the watch if it may be set. */
    private void leave(ZkSession s, boolean watchMayBeSet, Runnable removed) {
        synchronized (this) {
            if (left) {
                removed.run();
                return;
            }
            left = true;
        }
        PathWatches.of(services).leave(s == null ? null : s.zooKeeper(), path, this, watchMayBeSet, removed);
    }

    private void check() {
        CompletableFuture<ZkSession> next;
        try {
            next = services.session();
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        next.whenComplete((s, failure) -> {
            if (failure != null) {
                fail(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
                return;
            }
            synchronized (this) {
                if (done.isDone()) {
                    return;
                }
                session = s;
            }
            if (untilPresent) {
                // exists sets its watch whether or not the node is there
                s.zooKeeper().exists(path, this, (rc, p, ctx, stat) -> answered(s, Code.get(rc), stat != null, true), null);
            } else {
                // getData sets no watch on a missing node: a wait that finds it gone leaves nothing
                s.zooKeeper().getData(path, this, (rc, p, ctx, data, stat) -> answered(s, Code.get(rc),
                        Code.get(rc) == Code.OK, Code.get(rc) == Code.OK), null);
            }
        });
    }

    /**
     * @param exists whether the node was there
     * @param watchSet whether the request left this wait's watch set
     */
    private void answered(ZkSession s, Code code, boolean exists, boolean watchSet) {
        try {
            answer(s, code, exists, watchSet);
        } finally {
            looked.complete(null);
        }
    }

    private void answer(ZkSession s, Code code, boolean exists, boolean watchSet) {
        if (code == Code.OK || code == Code.NONODE) {
            boolean holds = untilPresent == exists;
            synchronized (this) {
                if (done.isDone()) {
                    return; // cancelled meanwhile: cancel() removed what this request set
                }
                if (!holds) {
                    watching = true;
                    return;
                }
                watching = false;
            }
            leave(s, watchSet, () -> { });
            done.complete(null);
            return;
        }
        if (code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT || code == Code.SESSIONMOVED
                || code == Code.SESSIONEXPIRED) {
            retryLater(code);
            return;
        }
        fail(new CoordinationException("cannot watch " + path + " (" + code + ")",
                KeeperException.create(code, path)));
    }

    private void retryLater(Code why) {
        Optional<Duration> delay;
        synchronized (this) {
            watching = false;
            delay = services.retryPolicy().retryDelay(retries++, Duration.ofNanos(System.nanoTime() - startNanos));
        }
        if (delay.isEmpty()) {
            fail(new CoordinationException("gave up waiting on " + path + " under "
                    + services.retryPolicy() + ": " + why, KeeperException.create(why, path)));
            return;
        }
        try {
            services.scheduler().schedule(this::check, delay.get().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            fail(new IllegalStateException("the client is closed", e));
        }
    }

    private void fail(Throwable failure) {
        leave(null, false, () -> { });
        done.completeExceptionally(failure);
        looked.complete(null);
    }

    @Override
    public void process(WatchedEvent event) {
        synchronized (this) {
            if (done.isDone()) {
                return;
            }
        }
        if (event.getType() == Event.EventType.None) {
            Event.KeeperState state = event.getState();
            if (state == Event.KeeperState.Expired || state == Event.KeeperState.Closed) {
                synchronized (this) {
                    watching = false; // gone with the session
                }
                check();
            }
            return; // a disconnection: the client sets the watch again when it reconnects
        }
        synchronized (this) {
            watching = false; // a watch fires once
        }
        Event.EventType type = event.getType();
        if (type == (untilPresent ? Event.EventType.NodeCreated : Event.EventType.NodeDeleted)) {
            synchronized (this) {
                if (done.isDone()) {
                    return;
                }
            }
            leave(null, false, () -> { }); // the watch fired: nothing is left to remove
            done.complete(null); // the ensemble says so: no read needed
            return;
        }
        log.trace("{}: {}; checking again", path, type);
        check();
    }



    @Override
    public String toString() {
        return "NodeWait[" + path + (untilPresent ? " exists" : " gone") + "]";
    }
}
