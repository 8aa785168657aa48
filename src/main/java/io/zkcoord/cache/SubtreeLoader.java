package io.zkcoord.cache;

import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a whole subtree with pipelined asynchronous requests: up to {@link #WINDOW} are in flight at
 * once, so a load costs about as many round trips as the tree is deep, not one per node.
 *
 * <ol>
 *   <li>Each node is read with {@code getData} (or {@code exists} when no data is kept); its stat
 *       tells how many children it has.
 *   <li>Only a node that has children, and lies above the depth limit, costs a {@code getChildren};
 *       with no data kept, that one request gives the node's stat and children together.
 *   <li>A child found is read only after its parent was: the result is always a tree.
 * </ol>
 * A node gone between the listing and the read is left out. The result is not one instant of the
 * tree; the cache's watch, set before the load began, reports whatever changed meanwhile.
 *
 * <p>Used once: {@link #start()} once, from any thread; the replies run on ZooKeeper's event thread.
 * Thread-safe.
 */
final class SubtreeLoader {

    private static final Logger log = LoggerFactory.getLogger(SubtreeLoader.class);
    /** Requests in flight at most: enough to fill the pipe, few enough to bound the memory of replies. */
    static final int WINDOW = 1_000;
    /** A child list this long may not fit in the client's default {@code jute.maxbuffer}: say so once. */
    private static final int MANY_CHILDREN = 50_000;

    private record Pending(String path, int depth) { }

    private final ZooKeeper zk;
    private final String top;
    private final int maxDepth;
    private final boolean cacheData;
    private final String cacheName;
    /** Told once: the nodes read, by path, parents first; or the failure. */
    private final BiConsumer<Map<String, HeldNode>, KeeperException> done;

    // Guarded by this.
    private final Map<String, HeldNode> nodes = new LinkedHashMap<>();
    private final ArrayDeque<Pending> toRead = new ArrayDeque<>();
    private int inFlight;
    private boolean finished;
    private long requests;

    SubtreeLoader(ZooKeeper zk, String top, int maxDepth, boolean cacheData, String cacheName,
            BiConsumer<Map<String, HeldNode>, KeeperException> done) {
        this.zk = zk;
        this.top = top;
        this.maxDepth = maxDepth;
        this.cacheData = cacheData;
        this.cacheName = cacheName;
        this.done = done;
    }

    void start() {
        synchronized (this) {
            toRead.add(new Pending(top, 0));
        }
        pump();
    }

    /** @return the requests sent so far */
    synchronized long requests() {
        return requests;
    }

    private void pump() {
        for (;;) {
            Pending next;
            synchronized (this) {
                if (finished || inFlight >= WINDOW || toRead.isEmpty()) {
                    break;
                }
                next = toRead.poll();
                inFlight++;
                requests++;
            }
            read(next);
        }
        finishIfDone();
    }

    private void read(Pending p) {
        boolean listChildren = p.depth() < maxDepth;
        if (cacheData) {
            zk.getData(p.path(), false, (rc, path, ctx, data, stat) -> {
                if (ok(rc, path)) {
                    nodeRead(p, new HeldNode(data, stat), listChildren && stat.getNumChildren() > 0);
                }
                replied();
            }, null);
        } else if (listChildren) {
            zk.getChildren(p.path(), false, (rc, path, ctx, children, stat) -> {
                if (ok(rc, path)) {
                    nodeRead(p, new HeldNode(null, stat), false);
                    childrenRead(p, children);
                }
                replied();
            }, null);
        } else {
            zk.exists(p.path(), false, (rc, path, ctx, stat) -> {
                if (stat != null && ok(rc, path)) {
                    nodeRead(p, new HeldNode(null, stat), false);
                }
                replied();
            }, null);
        }
    }

    private void nodeRead(Pending p, HeldNode node, boolean listChildren) {
        synchronized (this) {
            if (finished) {
                return;
            }
            nodes.put(p.path(), node);
            if (!listChildren) {
                return;
            }
            inFlight++;
            requests++;
        }
        if (node.numChildren >= MANY_CHILDREN) {
            log.info("{}: {} has {} children; a child list that large needs the client's jute.maxbuffer raised "
                    + "(see docs/cache.md)", cacheName, p.path(), node.numChildren);
        }
        zk.getChildren(p.path(), false, (rc, path, ctx, children) -> {
            if (ok(rc, path)) {
                childrenRead(p, children);
            }
            replied();
        }, null);
    }

    private void childrenRead(Pending parent, List<String> children) {
        synchronized (this) {
            if (finished) {
                return;
            }
            for (String name : children) {
                toRead.add(new Pending(CacheTree.childOf(parent.path(), name), parent.depth() + 1));
            }
        }
    }

    private void replied() {
        synchronized (this) {
            inFlight--;
        }
        pump();
    }

    /**
     * @return true if the reply carries a node; false for a node gone meanwhile or one this client may
     *     not read (left out); any other error fails the load
     */
    private boolean ok(int rc, String path) {
        Code code = Code.get(rc);
        if (code == Code.OK) {
            return true;
        }
        if (code == Code.NOAUTH) {
            log.warn("{}: may not read {}; it and what lies below it are left out", cacheName, path);
            return false;
        }
        if (code != Code.NONODE) {
            fail(KeeperException.create(code, path));
        }
        return false;
    }

    private void fail(KeeperException e) {
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
        }
        done.accept(null, e);
    }

    private void finishIfDone() {
        synchronized (this) {
            if (finished || inFlight > 0 || !toRead.isEmpty()) {
                return;
            }
            finished = true;
        }
        done.accept(nodes, null);
    }
}
