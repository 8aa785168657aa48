package io.zkcoord.cache;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.WatcherType;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link CacheTree} in step with the server, on one persistent recursive watch.
 *
 * <ol>
 *   <li><b>Load</b> (at start, after every reconnection, in every new session): set the watch first
 *       (once per session: the client sets it again by itself after a reconnection), then read the
 *       whole subtree ({@link SubtreeLoader}) and apply the {@link TreeDiff} between what was held and
 *       what was read. A load sent after the watch sees every change made before it; the changes
 *       made during it are held back and read again once it is applied.
 *   <li><b>Live</b>: every event of the watch (a node made, changed or deleted) costs one read of
 *       that node, applied in the order the events came ({@link CacheTree#update}). The server sends
 *       a session's events and replies in one order, so a reply already reflects every event before
 *       it.
 *   <li>While disconnected no events come and reads fail: nothing is applied until the load that
 *       follows the reconnection, which reports only the differences.
 * </ol>
 * Every step runs under {@link #stepLock}, one at a time, on the thread that brings it: ZooKeeper's
 * event thread for events and replies (so in the order the client delivered them, with no thread
 * hand-off on the way from an event to its read), a connection listener's thread for reconnections.
 * A step never blocks: it sends asynchronous requests, changes the tree under its lock and queues
 * the events for the listeners, who run elsewhere. Each load has a generation: replies of an older
 * one are ignored.
 *
 * <p>Thread-safe.
 */
final class SubtreeSync {

    private static final Logger log = LoggerFactory.getLogger(SubtreeSync.class);
    /** After an error that a reconnection will not cure (the watch refused, a load failed), load again after this. */
    private static final long RETRY_MILLIS = 1_000;
    /** How long {@link #close()} waits for the server to confirm that the watch is removed. */
    private static final long REMOVE_WAIT_MILLIS = 5_000;

    private final ZkClient client;
    private final ClientServices services;
    private final String top;
    private final int maxDepth;
    private final boolean cacheData;
    private final String name;
    private final CacheTree tree;
    private final ListenerDispatch dispatch;
    /** Held while a step runs; taken before {@code this}, never the other way round. */
    private final Object stepLock = new Object();
    private final Executor steps = this::step;
    private final Watcher watcher = this::watched;
    private final ConnectionListener connection;
    /** Counted down once the watch is off the server (or need not be removed) after close. */
    private final CountDownLatch watchGone = new CountDownLatch(1);
    private final RecursiveWatches shared;

    // Guarded by this (touched by close() too).
    /** The session whose handle holds (or is setting) the watch, or null. */
    private ZkSession watchedIn;
    /** The server has confirmed the watch in {@link #watchedIn}. */
    private boolean watchConfirmed;
    private boolean closed;

    // Steps only (under stepLock).
    private long generation;
    /** While a load is in flight: the paths whose events came meanwhile, in order; null otherwise. */
    private List<String> heldBack;
    private boolean initialized;
    /**
     * Loads read one node per request: set when a connection loss cut a batch, until a load completes
     * (after which the cache knows the size of every node it holds and budgets batches by it).
     */
    private boolean singleReads;
    /** Set if a connection loss cut a batch of the latest load (the loader itself is not kept: it holds what it read). */
    private AtomicBoolean lastLoadCut = new AtomicBoolean();

    /**
     * {@code WatcherType.PersistentRecursive}, new in ZooKeeper 3.9 (removing one persistent
     * recursive watch); looked up by name, so that the library loads with a 3.8 client jar, where
     * it is null and a cache cannot be made.
     */
    private static final WatcherType PERSISTENT_RECURSIVE = persistentRecursive();

    private static WatcherType persistentRecursive() {
        for (WatcherType type : WatcherType.values()) {
            if (type.name().equals("PersistentRecursive")) {
                return type;
            }
        }
        return null;
    }

    /**
     * @throws UnsupportedOperationException if the ZooKeeper client jar is older than 3.9
     */
    static void requireZooKeeper39() {
        if (PERSISTENT_RECURSIVE == null) {
            throw new UnsupportedOperationException("ZkCache needs the ZooKeeper client 3.9 or later (it"
                    + " removes its persistent recursive watch, which the 3.8 client cannot); this class path"
                    + " has " + org.apache.zookeeper.Version.getFullVersion());
        }
    }

    SubtreeSync(ZkClient client, String top, int maxDepth, boolean cacheData, String name, CacheTree tree,
            ListenerDispatch dispatch) {
        requireZooKeeper39();
        this.client = client;
        this.services = ClientServices.of(client);
        this.top = top;
        this.maxDepth = maxDepth;
        this.cacheData = cacheData;
        this.name = name;
        this.tree = tree;
        this.dispatch = dispatch;
        this.shared = services.shared(RecursiveWatches.class, RecursiveWatches::new);
        this.connection = state -> steps.execute(() -> connectionChanged(state));
    }

    /**
     * Starts watching and loading; returns at once.
     *
     * @throws IllegalStateException if the client is closed
     */
    void start() {
        client.addConnectionListener(connection);
        if (isClosed()) {
            // close() ran between the cache's start() and this line and found no listener to
            // remove: close() sets closed before it removes, so one side always removes it.
            client.removeConnectionListener(connection);
            return;
        }
        steps.execute(this::load);
    }

    /**
     * Stops: no step applies anything more, and the watch is removed from the server (waiting up
     * to {@link #REMOVE_WAIT_MILLIS} for its confirmation while connected) and from the client.
     */
    void close() {
        ZkSession session;
        boolean confirmed;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            session = watchedIn;
            confirmed = watchConfirmed;
            watchedIn = null;
        }
        client.removeConnectionListener(connection);
        if (session == null) {
            watchGone.countDown();
        } else if (confirmed) {
            removeWatch(session);
        } // else the reply to addWatch removes it (watchSet)
        try {
            if (!watchGone.await(REMOVE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                log.warn("{}: the server did not confirm the watch's removal within {} ms", name, REMOVE_WAIT_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closed all the same; the removal goes on in the background
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------ intake (ZooKeeper's event thread)

    private void watched(WatchedEvent event) {
        if (event.getType() != EventType.None && event.getPath() != null) {
            String path = event.getPath();
            steps.execute(() -> changed(path));
        }
    }

    // ------------------------------------------------------------------ steps

    private void step(Runnable task) {
        synchronized (stepLock) {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("{}: a step failed", name, e); // never into ZooKeeper's event thread
            }
        }
    }

    private void connectionChanged(ConnectionState state) {
        if (state.isConnected()) {
            load();
        }
    }

    /** Sets the watch in the current session if it is not set there, then reads the whole subtree. */
    private void load() {
        ZkSession session = currentSession();
        if (session == null) {
            return; // the next CONNECTED or RECONNECTED loads
        }
        long gen = ++generation;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (watchedIn != session) {
                if (watchedIn != null) {
                    shared.sessionEnded(watchedIn.id());
                }
                watchedIn = session;
                watchConfirmed = false;
                shared.adding(session.id(), top);
                session.zooKeeper().addWatch(top, watcher, AddWatchMode.PERSISTENT_RECURSIVE,
                        (rc, path, ctx) -> steps.execute(() -> watchSet(session, rc)), null);
            }
        }
        heldBack = new ArrayList<>();
        if (lastLoadCut.get() && !singleReads) {
            singleReads = true;
            log.warn("{}: a connection loss cut a batched read of the load (a reply over the client's jute.maxbuffer"
                    + " drops the connection, and the sizes of nodes not read yet are guesses); loading again one node"
                    + " per request", name);
        }
        lastLoadCut = new AtomicBoolean();
        new SubtreeLoader(session.zooKeeper(), top, maxDepth, cacheData, !singleReads, this::heldSize, lastLoadCut,
                name, (nodes, failure) -> steps.execute(() -> loaded(gen, nodes, failure))).start();
    }

    private void watchSet(ZkSession session, int rc) {
        Code code = Code.get(rc);
        synchronized (this) {
            if (closed) {
                if (code == Code.OK && session.isAlive()) {
                    removeWatch(session); // closed while the watch was being set
                } else {
                    shared.removed(session.id(), top);
                    watchGone.countDown();
                }
                return;
            }
            if (session != watchedIn) {
                return;
            }
            if (code == Code.OK) {
                watchConfirmed = true;
                return;
            }
            watchedIn = null; // set it again with the next load
            shared.removed(session.id(), top);
        }
        if (isConnectionProblem(code)) {
            log.debug("{}: watch not set ({}); set again after reconnecting", name, code);
        } else {
            log.warn("{}: the server refused the watch on {}: {}; trying again in {} ms", name, top, code, RETRY_MILLIS);
            later();
        }
    }

    private void loaded(long gen, Map<String, HeldNode> nodes, KeeperException failure) {
        if (gen != generation || isClosed()) {
            return;
        }
        List<String> meanwhile = heldBack;
        heldBack = null;
        if (failure != null) {
            if (isConnectionProblem(failure.code())) {
                log.debug("{}: load interrupted ({}); loading again after reconnecting", name, failure.code());
            } else {
                log.warn("{}: load failed: {}; trying again in {} ms", name, failure.toString(), RETRY_MILLIS);
                later();
            }
            return;
        }
        singleReads = false;
        dispatch.publish(tree.replaceAll(nodes));
        if (!initialized) {
            initialized = true;
            dispatch.initialized();
        }
        for (String path : meanwhile) {
            read(path);
        }
    }

    /** @return the data size held for {@code path}, or -1 if none is held; any thread */
    private int heldSize(String path) {
        HeldNode held = tree.get(path);
        return held == null ? -1 : held.dataLength;
    }

    private void changed(String path) {
        if (isClosed() || !tree.inScope(path) || tree.depthBelowTop(path) > maxDepth) {
            return;
        }
        if (heldBack != null) {
            heldBack.add(path);
        } else {
            read(path);
        }
    }

    /** One read of one node, in the session holding the watch; its reply is applied as a step. */
    private void read(String path) {
        ZkSession session;
        synchronized (this) {
            session = watchedIn;
        }
        if (session == null) {
            return; // the next load reads it
        }
        long gen = generation;
        ZooKeeper zk = session.zooKeeper();
        if (cacheData) {
            zk.getData(path, false, (rc, p, ctx, data, stat) -> steps.execute(() -> nodeRead(gen, p, rc, data, stat)), null);
        } else {
            zk.exists(path, false, (rc, p, ctx, stat) -> steps.execute(() -> nodeRead(gen, p, rc, null, stat)), null);
        }
    }

    private void nodeRead(long gen, String path, int rc, byte[] data, Stat stat) {
        if (gen != generation || isClosed()) {
            return; // a load sent later reads it again
        }
        Code code = Code.get(rc);
        HeldNode read;
        if (code == Code.OK && stat != null) {
            read = new HeldNode(cacheData ? data : null, stat);
        } else if (code == Code.NONODE || code == Code.OK) {
            read = null;
        } else if (code == Code.NOAUTH) {
            log.warn("{}: may not read {}; it is left out", name, path);
            read = null;
        } else {
            return; // the connection or session failed: the load after reconnecting catches up
        }
        dispatch.publish(tree.update(path, read));
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Takes the watch off the client, and off the server unless another cache of the session still
     * watches the same path ({@link RecursiveWatches} says why it is done this way). Never waits.
     */
    private void removeWatch(ZkSession session) {
        boolean last = shared.removed(session.id(), top);
        ZooKeeper zk = session.zooKeeper();
        if (!session.isAlive()) {
            watchGone.countDown(); // the handle is closed: nothing is left on it, nor on the server
            return;
        }
        boolean onServer = last && services.isConnected();
        try {
            if (onServer) {
                zk.removeAllWatches(top, PERSISTENT_RECURSIVE, false, (rc, path, ctx) -> {
                    if (rc != Code.OK.intValue()) {
                        removeLocally(zk); // the connection dropped: the server lost the watch with it
                    }
                    watchGone.countDown();
                }, null);
            } else {
                // Disconnected: the server dropped the watch with the connection. Or another cache
                // still needs the server's watch. Either way only ours goes, from the client.
                removeLocally(zk);
                watchGone.countDown();
            }
        } catch (RuntimeException e) {
            log.debug("{}: could not remove the watch: {}", name, e.toString());
            removeLocally(zk);
            watchGone.countDown();
        }
    }

    private void removeLocally(ZooKeeper zk) {
        try {
            zk.removeWatches(top, watcher, PERSISTENT_RECURSIVE, true, (rc, path, ctx) -> { }, null);
        } catch (RuntimeException e) {
            log.debug("{}: could not remove the watch locally: {}", name, e.toString());
        }
    }

    private void later() {
        if (!isClosed() && !client.isClosed()) {
            services.scheduler().schedule(() -> steps.execute(this::load), RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private ZkSession currentSession() {
        try {
            return services.session().getNow(null);
        } catch (RuntimeException e) {
            return null; // completed exceptionally: the client is closed
        }
    }

    private static boolean isConnectionProblem(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.SESSIONEXPIRED || code == Code.SESSIONMOVED
                || code == Code.OPERATIONTIMEOUT;
    }
}
