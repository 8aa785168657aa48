package io.zkcoord.cache;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.ToIntFunction;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a whole subtree with pipelined asynchronous requests, nodes' data in batches: up to {@link
 * #WINDOW} reads are in flight at once, so a load costs about as many round trips as the tree is deep,
 * and with data kept up to {@link #MAX_BATCH} nodes are read by one read-only {@code multi}, so the
 * server handles one request for many nodes.
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
 * <p><b>Batches and {@code jute.maxbuffer}.</b> A {@code multi}'s one reply holds the data of every
 * node it reads, and the client drops its connection on a reply longer than its {@code
 * jute.maxbuffer}. A batch therefore stops at {@link #BUDGET_SHARE} of the client's limit, counting
 * each node by the size of the data the cache already holds for it (a reload), or else by {@link
 * #MARGIN} times the largest data this load has read so far (at least {@link #GUESS_BYTES}), plus
 * 96 bytes for the stat. So that this guess comes from real sizes, of each child list the first child
 * the cache holds no data for is read alone (a probe) and its siblings the cache holds no data for
 * wait for its reply (the next of them probes if it was gone or unreadable); children the cache holds
 * are not held back. A batch's reply thus stays under the client's limit while its nodes are at most
 * about eight times the largest data read before them (or 8 KB). Sizes are still guesses (a node may
 * be far larger than its probe, or have grown since): if a connection loss cuts a batch, the flag
 * given to the constructor says so, and the cache's next load reads one node per request.
 *
 * <p>Used once: {@link #start()} once, from any thread; the replies run on ZooKeeper's event thread.
 * Thread-safe.
 */
final class SubtreeLoader {

    private static final Logger log = LoggerFactory.getLogger(SubtreeLoader.class);
    /**
     * Reads in flight at most (a batch counts each node it reads): enough to fill the pipe, few enough
     * to bound the memory of replies.
     */
    static final int WINDOW = 1_000;
    /** Nodes read by one {@code multi} at most. */
    static final int MAX_BATCH = 100;
    /** The share of the client's {@code jute.maxbuffer} a batch's reply may be expected to fill. */
    static final int BUDGET_SHARE = 4;
    /** The data size the guess for a node not read yet starts from, until larger data is read. */
    static final int GUESS_BYTES = 1_024;
    /** A node not read yet is counted at this many times the largest data this load has read. */
    static final int MARGIN = 2;
    /** A {@code getData} result's bytes besides the data: stat, lengths, the multi's per-result header. */
    private static final int RESULT_OVERHEAD = 96;
    /** A child list this long may not fit in the client's default {@code jute.maxbuffer}: say so once. */
    private static final int MANY_CHILDREN = 50_000;

    /**
     * A node to read; {@code probeOf} set: the first of its siblings read, alone, whose reply lets the
     * ones waiting in that listing be batched.
     */
    private record Pending(String path, int depth, Listing probeOf) { }

    /** Siblings the cache holds no data for, waiting for their probe's reply. Guarded by the loader. */
    private static final class Listing {
        final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    }

    private final ZooKeeper zk;
    private final String top;
    private final int maxDepth;
    private final boolean cacheData;
    /** The expected bytes of a batch's reply at most; 0: one node per request. */
    private final int batchBudget;
    private final ToIntFunction<String> heldSize;
    private final String cacheName;
    /** Told once: the nodes read, by path, parents first; or the failure. */
    private final BiConsumer<Map<String, HeldNode>, KeeperException> done;

    // Guarded by this.
    private final Map<String, HeldNode> nodes = new LinkedHashMap<>();
    private final ArrayDeque<Pending> toRead = new ArrayDeque<>();
    private int inFlight;
    private boolean finished;
    private long requests;
    private int largestData;
    /**
     * Set when a connection loss failed a batch of this load: perhaps a reply over the client's {@code
     * jute.maxbuffer} (the client drops the connection), perhaps the network. Kept by the caller, not
     * the loader, which holds every node read until it is dropped.
     */
    private final AtomicBoolean cutWhileBatching;

    /**
     * @param batch whether nodes' data may be read in batches (only with {@code cacheData}: a batch
     *     reads data)
     * @param heldSize the data size the cache holds for a path, or -1 if it holds none
     * @param cutWhileBatching set if a connection loss fails a batch
     */
    SubtreeLoader(ZooKeeper zk, String top, int maxDepth, boolean cacheData, boolean batch,
            ToIntFunction<String> heldSize, AtomicBoolean cutWhileBatching, String cacheName,
            BiConsumer<Map<String, HeldNode>, KeeperException> done) {
        this.zk = zk;
        this.top = top;
        this.maxDepth = maxDepth;
        this.cacheData = cacheData;
        this.batchBudget = batch && cacheData ? maxBuffer(zk) / BUDGET_SHARE : 0;
        this.heldSize = heldSize;
        this.cutWhileBatching = cutWhileBatching;
        this.cacheName = cacheName;
        this.done = done;
    }

    void start() {
        synchronized (this) {
            toRead.add(new Pending(top, 0, null));
        }
        pump();
    }

    /** @return the requests sent so far */
    synchronized long requests() {
        return requests;
    }

    private static int maxBuffer(ZooKeeper zk) {
        return zk.getClientConfig().getInt(ZKConfig.JUTE_MAXBUFFER, ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT);
    }

    private void pump() {
        for (;;) {
            List<Pending> next;
            synchronized (this) {
                if (finished || inFlight >= WINDOW || toRead.isEmpty()) {
                    break;
                }
                next = takeBatch();
                inFlight += next.size();
                requests++;
            }
            if (next.size() == 1) {
                read(next.get(0));
            } else {
                readBatch(next);
            }
        }
        finishIfDone();
    }

    /** @return the next nodes to read in one request: one, or as many as the budget allows */
    private List<Pending> takeBatch() {
        List<Pending> batch = new ArrayList<>();
        batch.add(toRead.poll());
        if (batchBudget == 0 || batch.get(0).probeOf() != null) {
            return batch;
        }
        long guess = (long) MARGIN * Math.max(largestData, GUESS_BYTES);
        long expected = expectedBytes(batch.get(0), guess);
        while (!toRead.isEmpty() && toRead.peek().probeOf() == null && batch.size() < MAX_BATCH
                && inFlight + batch.size() < WINDOW) {
            long next = expectedBytes(toRead.peek(), guess);
            if (expected + next > batchBudget) {
                break;
            }
            batch.add(toRead.poll());
            expected += next;
        }
        return batch;
    }

    /** @return the bytes {@code p}'s result is expected to take in a batch's reply */
    private long expectedBytes(Pending p, long guess) {
        int held = heldSize.applyAsInt(p.path());
        return (held >= 0 ? held : guess) + RESULT_OVERHEAD;
    }

    private void readBatch(List<Pending> batch) {
        List<Op> ops = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            ops.add(Op.getData(p.path()));
        }
        zk.multi(ops, (rc, path, ctx, results) -> {
            // A read-only multi answers every read, an error result for a node gone (or unreadable) and the
            // data of the others; the client's callback then carries that error's code with the results.
            // Only a multi without results failed as a whole.
            if (results == null || results.size() != batch.size()) {
                if (Code.get(rc) == Code.CONNECTIONLOSS) {
                    cutWhileBatching.set(true);
                }
                ok(rc == Code.OK.intValue() ? Code.SYSTEMERROR.intValue() : rc, batch.get(0).path());
            } else {
                for (int i = 0; i < batch.size(); i++) {
                    Pending p = batch.get(i);
                    OpResult result = results.get(i);
                    if (result instanceof OpResult.GetDataResult r) {
                        Stat stat = r.getStat();
                        noteSize(stat.getDataLength());
                        nodeRead(p, new HeldNode(r.getData(), stat), p.depth() < maxDepth && stat.getNumChildren() > 0);
                    } else if (result instanceof OpResult.ErrorResult e) {
                        ok(e.getErr(), p.path());
                    } else {
                        ok(Code.SYSTEMERROR.intValue(), p.path());
                    }
                }
            }
            replied(batch.size());
        }, null);
    }

    private synchronized void noteSize(int dataLength) {
        largestData = Math.max(largestData, dataLength);
    }

    private void read(Pending p) {
        boolean listChildren = p.depth() < maxDepth;
        if (cacheData) {
            zk.getData(p.path(), false, (rc, path, ctx, data, stat) -> {
                boolean read = ok(rc, path);
                if (read) {
                    noteSize(stat.getDataLength());
                    nodeRead(p, new HeldNode(data, stat), listChildren && stat.getNumChildren() > 0);
                }
                if (p.probeOf() != null) {
                    probed(p.probeOf(), read);
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
            Listing listing = new Listing();
            for (String name : children) {
                String path = CacheTree.childOf(parent.path(), name);
                if (batchBudget == 0 || heldSize.applyAsInt(path) >= 0) {
                    toRead.add(new Pending(path, parent.depth() + 1, null));
                } else {
                    listing.waiting.add(new Pending(path, parent.depth() + 1, listing));
                }
            }
            if (!listing.waiting.isEmpty()) {
                toRead.add(listing.waiting.poll());
            }
        }
    }

    /**
     * A probe replied: with data ({@code read}), its waiting siblings may now be batched, counted by the
     * sizes read; without (gone, unreadable), the next of them probes.
     */
    private synchronized void probed(Listing listing, boolean read) {
        if (finished || listing.waiting.isEmpty()) {
            return;
        }
        if (!read) {
            toRead.add(listing.waiting.poll());
            return;
        }
        for (Pending p : listing.waiting) {
            toRead.add(new Pending(p.path(), p.depth(), null));
        }
        listing.waiting.clear();
    }

    private void replied() {
        replied(1);
    }

    private void replied(int reads) {
        synchronized (this) {
            inFlight -= reads;
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
