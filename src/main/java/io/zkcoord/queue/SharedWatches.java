package io.zkcoord.queue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watches of one session: one {@link Watcher} per watched node (and one per watched
 * directory's children), shared by every acquisition of the session that waits on it, and told to
 * each of them when it fires.
 *
 * <p>Why: ZooKeeper's client keeps every watcher object it is given until its watch fires, even
 * when nobody waits for it any more; the server keeps one watch per node and session whatever
 * that number. A wait that ends without the lock (a timed-out {@code tryLock}, an interrupt, a
 * cancelled future) cannot take its watch back without a {@code removeWatches}, and a {@code
 * removeWatches} still pending when the connection drops makes ZooKeeper 3.9's client swallow its
 * Disconnected event, hiding the outage from the session's state machine. So nothing is removed:
 * every request that sets a watch on a node passes that node's one watcher, which ZooKeeper's
 * client registers once however often it is passed. A wait that ends just leaves ({@link
 * Subscription#cancel()}), and the client holds at most one watcher per node that some wait of
 * this session watched and that has not changed since; it drops it when the node changes (most
 * often: is deleted), or with the session.
 *
 * <p>Thread-safe. Subscribers are told outside this object's lock, on ZooKeeper's event thread.
 */
final class SharedWatches {

    private static final Logger log = LoggerFactory.getLogger(SharedWatches.class);

    /** What a watch is on: a node's data ({@code getData}) or a directory's children ({@code getChildren}). */
    enum Kind {
        DATA,
        CHILDREN
    }

    // Guarded by this.
    private final Map<String, Shared> data = new HashMap<>();
    private final Map<String, Shared> children = new HashMap<>();

    /**
     * Subscribes to the watch of {@code path}: {@code fired} is told its next event (a node event,
     * never a connection event), once, unless the subscription is cancelled first. The caller must
     * then send one request with {@link Subscription#watcher()} and report its reply's code with
     * {@link Subscription#answered(Code)}: the watch is set by that request (or was set by an earlier
     * one and has not fired since).
     */
    synchronized Subscription watch(Kind kind, String path, Consumer<WatchedEvent> fired) {
        Map<String, Shared> table = kind == Kind.DATA ? data : children;
        Shared shared = table.computeIfAbsent(path, p -> new Shared(table, p));
        Subscription s = new Subscription(shared, fired);
        shared.subscribers.add(s);
        shared.pending++;
        return s;
    }

    /** @return the watchers this session's client holds for the queue core, or may soon hold (tests, messages) */
    synchronized int size() {
        return data.size() + children.size();
    }

    /** One wait's interest in a shared watch. */
    final class Subscription {
        private final Shared shared;
        private final Consumer<WatchedEvent> fired;

        private Subscription(Shared shared, Consumer<WatchedEvent> fired) {
            this.shared = shared;
            this.fired = fired;
        }

        /** @return the watcher to pass with the request that sets the watch: the same for every subscriber of the node */
        Watcher watcher() {
            return shared;
        }

        /**
         * The reply to the request sent with {@link #watcher()}, or {@link Code#SYSTEMERROR} if it
         * could not be sent. {@code OK} means ZooKeeper's client holds the watcher now (a {@code
         * getData} or {@code getChildren} sets its watch only then).
         */
        void answered(Code code) {
            synchronized (SharedWatches.this) {
                shared.pending--;
                if (code == Code.OK) {
                    shared.armed = true;
                }
                shared.forgetIfIdle();
            }
        }

        /** The wait no longer waits: it is not told the event. Never sends anything. */
        void cancel() {
            synchronized (SharedWatches.this) {
                shared.subscribers.remove(this);
                shared.forgetIfIdle();
            }
        }
    }

    /** The one watcher of a node (or directory), as ZooKeeper's client holds it. */
    private final class Shared implements Watcher {
        private final Map<String, Shared> table;
        private final String path;
        // Guarded by SharedWatches.this.
        private final LinkedHashSet<Subscription> subscribers = new LinkedHashSet<>();
        /** Requests sent with this watcher and not answered yet. */
        private int pending;
        /** True while ZooKeeper's client holds this watcher: set by a request, not fired since. */
        private boolean armed;

        Shared(Map<String, Shared> table, String path) {
            this.table = table;
            this.path = path;
        }

        /**
         * Forgotten once ZooKeeper's client does not hold it, no request may make it hold it, and
         * nobody waits: the next wait on this node makes a new one. Kept otherwise, so that the
         * next wait passes this very object and the client holds no second one.
         */
        private void forgetIfIdle() {
            if (!armed && pending == 0 && subscribers.isEmpty()) {
                table.remove(path, this);
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                return; // connection events: the watch stays set; the session's state machine handles them
            }
            List<Subscription> told;
            synchronized (SharedWatches.this) {
                armed = false; // a watch fires once: ZooKeeper's client has dropped it
                told = new ArrayList<>(subscribers);
                subscribers.clear();
                forgetIfIdle();
            }
            for (Subscription s : told) {
                try {
                    s.fired.accept(event);
                } catch (RuntimeException e) {
                    log.error("a waiter failed on the event {} of {}", event.getType(), path, e);
                }
            }
        }

        @Override
        public String toString() {
            return "SharedWatch[" + path + "]";
        }
    }
}
