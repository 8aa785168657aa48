package io.zkcoord.cache;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.queue.QueuePaths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * A local, eventually consistent copy of the subtree at a path (the path itself included), kept on
 * one persistent recursive watch. Thread-safe.
 *
 * <pre>{@code
 * try (ZkCache flags = new ZkCache(client, "/config/flags")) {
 *     flags.addListener(new CacheListener() {
 *         public void changed(CachedNode before, CachedNode after) { reload(after); }
 *     });
 *     flags.start();
 *     flags.awaitInitialized(Duration.ofSeconds(10));
 *     Optional<CachedNode> beta = flags.get("/config/flags/beta");
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Nothing missed, nothing invented.</b> Once the ensemble is quiet, the cache equals the
 *       subtree node for node (path, data, {@code czxid}, {@code mzxid}, {@code version}), whatever
 *       happened meanwhile: connection losses, a session expiry, a new leader. After a reconnection
 *       or in a new session the cache reads the subtree again and reports only the differences: a
 *       node deleted and made again unseen is reported deleted, then created (by {@code czxid}); a
 *       data change missed is reported changed (by {@code mzxid}).
 *   <li><b>One watch.</b> A started cache holds one watch on the server, whatever its size, and none
 *       after {@link #close()}. Each change costs one read of the changed node.
 *   <li><b>Depth.</b> With {@link Builder#maxDepth(int)} nothing below the depth is read or held.
 *   <li><b>Listeners</b> are called as {@link CacheListener} says: one at a time, in order, never on
 *       ZooKeeper's event thread nor under a lock of the cache.
 *   <li>The path as the client sees it: with a chroot in the connect string, paths are below it and
 *       do not name it. A path that does not exist yet is an empty cache; its nodes are reported as
 *       they appear.
 * </ul>
 * A node's data is read whole: a child list longer than the client's {@code jute.maxbuffer} allows
 * (about 60,000 names of 16 characters by default) needs that raised (docs/cache.md).
 *
 * <p>A load reads nodes' data up to 100 at a time with read-only {@code multi} requests (servers
 * 3.6 and later), each batch's expected reply kept to a quarter of the client's {@code
 * jute.maxbuffer}: a node counts at the size of the data the cache holds for it (a reload), or else
 * at twice the largest data the load has read so far (at least twice 1 KB), plus 96 bytes. Of each
 * child list, the first child the cache holds no data for is read alone and its siblings the cache
 * holds no data for wait for that reply (the next is read alone if it was gone or unreadable), so a
 * first load over siblings of similar sizes never overflows: a batch stays under the limit while its
 * nodes are at most about eight times the largest data read before them (or 8 KB). Data far larger
 * than that can still make a batch's reply too long for the client, which then drops its connection
 * (every recipe of the client sees a short disconnection; the session stays): the cache then loads
 * again one node per request, and budgets later loads by the sizes it then holds.
 */
public final class ZkCache implements AutoCloseable {

    private enum Phase { NEW, STARTED, CLOSED }

    private final String path;
    private final String name;
    private final CacheTree tree;
    private final ListenerDispatch dispatch;
    private final SubtreeSync sync;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.NEW);
    /** True once the first load is applied and told, false if closed first. */
    private final CompletableFuture<Boolean> initialized = new CompletableFuture<>();

    /**
     * A cache of the whole subtree at {@code path}, data kept.
     *
     * @param client the client whose sessions the cache reads in
     * @param path the subtree's path, absolute, as the client sees it
     * @throws IllegalArgumentException if {@code client} is null or {@code path} is not a valid path
     * @throws UnsupportedOperationException if the ZooKeeper client jar is older than 3.9 (a cache
     *     removes its persistent recursive watch, which only 3.9 can)
     */
    public ZkCache(ZkClient client, String path) {
        this(new Builder(client, path));
    }

    private ZkCache(Builder b) {
        this.path = b.path;
        this.name = "cache " + b.path;
        ClientServices services = ClientServices.of(b.client);
        this.tree = new CacheTree(b.path);
        this.dispatch = new ListenerDispatch(name, services.userCallbacks(), () -> initialized.complete(true));
        this.sync = new SubtreeSync(b.client, b.path, b.maxDepth, b.cacheData, name, tree, dispatch);
    }

    /**
     * @param client the client whose sessions the cache reads in
     * @param path the subtree's path, absolute, as the client sees it
     * @return a builder of a cache of that subtree
     * @throws IllegalArgumentException if {@code client} is null or {@code path} is not a valid path
     */
    public static Builder builder(ZkClient client, String path) {
        return new Builder(client, path);
    }

    /**
     * Sets the watch and begins the first load; returns at once. The first load reports every node
     * it finds as {@code created}, then {@code initialized()}.
     *
     * @throws IllegalStateException if already started or closed, or if the client is closed
     */
    public void start() {
        if (!phase.compareAndSet(Phase.NEW, Phase.STARTED)) {
            throw new IllegalStateException(name + " is " + (phase.get() == Phase.CLOSED ? "closed" : "already started"));
        }
        sync.start();
    }

    /**
     * Waits until the first load is complete: the cache holds what it read, and the listeners
     * registered then have heard every {@code created} and {@code initialized()}.
     *
     * @param timeout how long to wait at most; zero or less does not wait
     * @return true once the first load is complete; false if the time ran out, or the cache was closed
     *     (or never started) meanwhile
     * @throws IllegalArgumentException if {@code timeout} is null
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitInitialized(Duration timeout) throws InterruptedException {
        if (timeout == null) {
            throw new IllegalArgumentException("timeout must not be null");
        }
        long nanos = Math.max(0, saturatedNanos(timeout));
        try {
            return initialized.get(nanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * @param path an absolute path, as the client sees it
     * @return the node held at {@code path}; empty if none is held (or the path is outside the cache)
     * @throws IllegalArgumentException if {@code path} is null
     */
    public Optional<CachedNode> get(String path) {
        requirePath(path);
        HeldNode node = tree.get(path);
        return node == null ? Optional.empty() : Optional.of(node.toCached(path));
    }

    /**
     * @param path an absolute path, as the client sees it
     * @return the children held under {@code path}, by name, sorted by name; empty if none or unknown.
     *     A snapshot: unmodifiable, never changed by the cache
     * @throws IllegalArgumentException if {@code path} is null
     */
    public Map<String, CachedNode> children(String path) {
        requirePath(path);
        TreeMap<String, CachedNode> out = new TreeMap<>();
        tree.children(path).forEach((child, node) -> out.put(child, node.toCached(CacheTree.childOf(path, child))));
        return Collections.unmodifiableSortedMap(out);
    }

    /** @return the number of nodes held, the path itself included */
    public int size() {
        return tree.size();
    }

    /** @return a snapshot of every node held, parents before children */
    public Stream<CachedNode> stream() {
        Map<String, HeldNode> all = tree.all();
        List<CachedNode> nodes = new ArrayList<>(all.size());
        all.forEach((p, node) -> nodes.add(node.toCached(p)));
        return nodes.stream();
    }

    /**
     * Adds a listener. It hears only what the cache applies from now on; after {@link #close()} it is
     * never called. Adding one listener twice makes it hear everything twice.
     *
     * @param listener the listener
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(CacheListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException(name + ": listener must not be null");
        }
        if (phase.get() != Phase.CLOSED) {
            dispatch.add(listener);
        }
    }

    /**
     * Removes a listener (one registration of it): it is not called after this returns, unless it is
     * being called right now by another thread.
     *
     * @param listener the listener; null or unknown does nothing
     */
    public void removeListener(CacheListener listener) {
        if (listener != null) {
            dispatch.remove(listener);
        }
    }

    /**
     * Stops the cache: removes its watch from the server (waiting up to a few seconds for the
     * server's answer while connected; a disconnected client lost it with the connection) and from the
     * client, and forgets every listener. No thread, watcher or listener of the cache is left. The
     * copy stays readable as it was. Idempotent; a cache never started is simply closed.
     */
    @Override
    public void close() {
        Phase was = phase.getAndSet(Phase.CLOSED);
        if (was == Phase.CLOSED) {
            return;
        }
        dispatch.clear();
        if (was == Phase.STARTED) {
            sync.close();
        }
        initialized.complete(false);
    }

    @Override
    public String toString() {
        return "ZkCache[" + path + ", " + phase.get().name().toLowerCase(java.util.Locale.ROOT) + ", " + tree.size()
                + " nodes]";
    }

    private void requirePath(String p) {
        if (p == null) {
            throw new IllegalArgumentException(name + ": path must not be null");
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /**
     * Builds a {@link ZkCache}. Not thread-safe; each {@link #build()} makes a new cache.
     */
    public static final class Builder {

        private final ZkClient client;
        private final String path;
        private int maxDepth = Integer.MAX_VALUE;
        private boolean cacheData = true;

        private Builder(ZkClient client, String path) {
            if (client == null) {
                throw new IllegalArgumentException("cache " + path + ": client must not be null");
            }
            this.client = client;
            this.path = "/".equals(path) ? path : QueuePaths.validate("cache", path);
        }

        /**
         * Bounds what is read and held: 0 is the node alone, 1 the node and its children, and so on.
         * Nothing below is read, not even listed. Default: no limit.
         *
         * @param depth the depth, 0 or more
         * @return this builder
         * @throws IllegalArgumentException if {@code depth} is negative
         */
        public Builder maxDepth(int depth) {
            if (depth < 0) {
                throw new IllegalArgumentException("cache " + path + ": maxDepth must be 0 or more, was " + depth);
            }
            this.maxDepth = depth;
            return this;
        }

        /**
         * @param cacheData false to keep only each node's stat ({@link CachedNode#data()} is then null);
         *     default true
         * @return this builder
         */
        public Builder cacheData(boolean cacheData) {
            this.cacheData = cacheData;
            return this;
        }

        /**
         * @return a new cache, not started
         * @throws UnsupportedOperationException if the ZooKeeper client jar is older than 3.9 (a
         *     cache removes its persistent recursive watch, which only 3.9 can)
         */
        public ZkCache build() {
            return new ZkCache(this);
        }
    }
}
