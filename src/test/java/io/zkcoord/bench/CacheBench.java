package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.cache.CacheListener;
import io.zkcoord.cache.CachedNode;
import io.zkcoord.cache.ZkCache;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Section {@code cache}: {@link ZkCache} side by side with Curator's {@code CuratorCache} in the
 * same run, on the same server and tree (10,000 nodes of 100 bytes under one parent):
 * <ol>
 *   <li>time to load the tree (start until initialized), and the requests the server received for it;
 *   <li>latency from a {@code setData} call to the listener's call, and the reads per change the
 *       server processed ({@code zk_cnt_readlatency}; the writer's {@code setData} is a write);
 *   <li>heap per cached node: used heap after GC with the cache loaded, minus before, over the nodes.
 * </ol>
 * The two run in turns, several rounds each after a warm-up, so that neither profits from the
 * other's JIT or the server's warm caches alone. Clients use 30 s sessions: pings barely count.
 */
final class CacheBench {

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final String TOP = "/bench-cache";
    private static final int NODES = Integer.getInteger("bench.cacheNodes", 10_000);
    private static final int DATA_BYTES = 100;
    private static final int WARMUP_ROUNDS = 3;
    private static final int ROUNDS = 5;
    private static final int CHANGES = 500;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    private final PrintStream progress;

    double loadRatio;
    double ourReadsPerChange;
    double ourHeapPerNode;
    double curatorHeapPerNode;

    CacheBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
        this.progress = progress;
    }

    /** One implementation under test: start a cache, wait for its first load, close it. */
    private interface Subject {
        String name();

        /** Starts a cache, waits for its load; a listener gets each change's path through {@code changes}. */
        AutoCloseable load(SynchronousQueue<Long> changes) throws Exception;
    }

    void run() throws Exception {
        ZkClient writer = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build();
        ZkClient ours = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build();
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(connect)
                .sessionTimeoutMs(30_000).retryPolicy(new RetryOneTime(100)).build();
        curator.start();
        curator.blockUntilConnected();
        try {
            progress.printf("C. cache: making %d nodes of %d bytes ...%n", NODES, DATA_BYTES);
            makeTree(writer.zooKeeper());
            Subject zkcoord = new Subject() {
                public String name() {
                    return "ZkCache";
                }

                public AutoCloseable load(SynchronousQueue<Long> changes) throws Exception {
                    ZkCache cache = new ZkCache(ours, TOP);
                    if (changes != null) {
                        cache.addListener(new CacheListener() {
                            @Override
                            public void changed(CachedNode before, CachedNode after) {
                                handOver(changes);
                            }
                        });
                    }
                    cache.start();
                    if (!cache.awaitInitialized(Duration.ofSeconds(120))) {
                        throw new IllegalStateException("ZkCache did not load");
                    }
                    return cache;
                }
            };
            Subject theirs = new Subject() {
                public String name() {
                    return "CuratorCache";
                }

                public AutoCloseable load(SynchronousQueue<Long> changes) throws Exception {
                    CuratorCache cache = CuratorCache.build(curator, TOP);
                    CountDownLatch loaded = new CountDownLatch(1);
                    cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(loaded::countDown)
                            .forChanges((before, after) -> {
                                if (changes != null) {
                                    handOver(changes);
                                }
                            }).build());
                    cache.start();
                    if (!loaded.await(120, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("CuratorCache did not load");
                    }
                    return cache;
                }
            };
            out.println();
            out.printf("C. Cache: %d nodes of %d bytes under one parent; ZkCache and Curator %s CuratorCache in turns%n",
                    NODES, DATA_BYTES, org.apache.curator.framework.CuratorFramework.class.getPackage().getImplementationVersion() == null
                            ? "5.9" : org.apache.curator.framework.CuratorFramework.class.getPackage().getImplementationVersion());
            double[] ourLoad = new double[ROUNDS];
            double[] theirLoad = new double[ROUNDS];
            long[] ourRequests = new long[ROUNDS];
            long[] theirRequests = new long[ROUNDS];
            for (int round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
                progress.printf("C. load round %d ...%n", round);
                for (Subject s : List.of(zkcoord, theirs)) {
                    ServerCounters.Snapshot before = counters.settled();
                    long start = System.nanoTime();
                    try (AutoCloseable cache = s.load(null)) {
                        double ms = (System.nanoTime() - start) / 1e6;
                        ServerCounters.Snapshot after = counters.settled();
                        if (round >= 0) {
                            (s == zkcoord ? ourLoad : theirLoad)[round] = ms;
                            (s == zkcoord ? ourRequests : theirRequests)[round] = counters.requests(before, after);
                        }
                    }
                }
            }
            out.println("   implementation   load ms (median of 5)   min     max     requests to load");
            printLoad("ZkCache", ourLoad, ourRequests);
            printLoad("CuratorCache", theirLoad, theirRequests);
            loadRatio = median(theirLoad) / median(ourLoad);
            out.printf("   ZkCache loads %.2f times as fast%n", loadRatio);

            out.println("   implementation   setData->listener p50 ms   p90 ms   p99 ms   reads per change   requests per change");
            for (Subject s : List.of(zkcoord, theirs)) {
                progress.printf("C. %s: %d changes ...%n", s.name(), CHANGES);
                latency(s, writer.zooKeeper());
            }

            out.println("   implementation   heap per cached node (bytes, after GC)");
            for (Subject s : List.of(zkcoord, theirs)) {
                long before = heapAfterGc();
                AutoCloseable cache = s.load(null);
                long after = heapAfterGc();
                double perNode = (double) (after - before) / (NODES + 1);
                out.printf("   %-16s %.0f%n", s.name(), perNode);
                if (s == zkcoord) {
                    ourHeapPerNode = perNode;
                } else {
                    curatorHeapPerNode = perNode;
                }
                cache.close();
            }
            large(writer.zooKeeper());
        } finally {
            curator.close();
            ours.close();
            writer.close();
        }
    }

    /** 100,000 children of 100 bytes under one node: ZkCache's load time and heap per node (docs/cache.md, promise 5). */
    private void large(ZooKeeper writer) throws Exception {
        int children = Integer.getInteger("bench.cacheLarge", 100_000);
        String top = TOP + "-large";
        progress.printf("C. making %d children ...%n", children);
        Random random = new Random(2);
        writer.create(top, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < children; i++) {
            ops.add(Op.create(String.format("%s/c%06d", top, i), data(random), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT));
            if (ops.size() == 1_000) {
                writer.multi(ops);
                ops.clear();
            }
        }
        org.apache.zookeeper.client.ZKClientConfig big = new org.apache.zookeeper.client.ZKClientConfig();
        big.setProperty("jute.maxbuffer", Integer.toString(8 * 1024 * 1024));
        try (ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30))
                .clientConfig(big).build()) {
            long before = heapAfterGc();
            long start = System.nanoTime();
            try (ZkCache cache = new ZkCache(client, top)) {
                cache.start();
                if (!cache.awaitInitialized(Duration.ofSeconds(300))) {
                    throw new IllegalStateException("the large cache did not load");
                }
                double ms = (System.nanoTime() - start) / 1e6;
                long after = heapAfterGc();
                out.printf("   ZkCache, %d children of %d bytes under one node (client jute.maxbuffer 8 MB):"
                        + " loaded in %.0f ms, %d nodes held, %.0f bytes of heap per node%n", children, DATA_BYTES, ms,
                        cache.size(), (double) (after - before) / cache.size());
            }
        }
    }

    void printTargets(PrintStream o) {
        o.printf("   cache: load %.2fx CuratorCache's speed (target >= 3), %.2f reads per change (target <= 1),"
                + " heap per node %.0f vs Curator's %.0f bytes (target <=): %s%n", loadRatio, ourReadsPerChange,
                ourHeapPerNode, curatorHeapPerNode, loadRatio >= 3 && ourReadsPerChange <= 1.01
                        && ourHeapPerNode <= curatorHeapPerNode ? "met" : "NOT MET");
    }

    private void latency(Subject s, ZooKeeper writer) throws Exception {
        SynchronousQueue<Long> heard = new SynchronousQueue<>();
        Random random = new Random(7);
        try (AutoCloseable cache = s.load(heard)) {
            for (int i = 0; i < 50; i++) { // warm-up
                writer.setData(TOP + "/n" + random.nextInt(NODES), data(random), -1);
                heard.poll(30, TimeUnit.SECONDS);
            }
            ServerCounters.Snapshot before = counters.settled();
            double[] ms = new double[CHANGES];
            for (int i = 0; i < CHANGES; i++) {
                String path = TOP + "/n" + random.nextInt(NODES);
                byte[] d = data(random);
                long start = System.nanoTime();
                writer.setData(path, d, -1);
                Long at = heard.poll(30, TimeUnit.SECONDS);
                if (at == null) {
                    throw new IllegalStateException(s.name() + " did not hear a change");
                }
                ms[i] = (at - start) / 1e6;
            }
            ServerCounters.Snapshot after = counters.settled();
            double reads = (double) (after.reads() - before.reads()) / CHANGES;
            double requests = (double) (counters.requests(before, after) - CHANGES) / CHANGES;
            Arrays.sort(ms);
            out.printf("   %-16s %-26.3f %-8.3f %-8.3f %-18.3f %.3f%n", s.name(), ms[CHANGES / 2], ms[CHANGES * 9 / 10],
                    ms[CHANGES * 99 / 100], reads, requests);
            if (s.name().equals("ZkCache")) {
                ourReadsPerChange = reads;
            }
        }
    }

    private static void handOver(SynchronousQueue<Long> changes) {
        long now = System.nanoTime();
        try {
            changes.offer(now, 30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static byte[] data(Random random) {
        byte[] d = new byte[DATA_BYTES];
        random.nextBytes(d);
        return d;
    }

    private void printLoad(String name, double[] ms, long[] requests) {
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        out.printf("   %-16s %-23.1f %-7.1f %-7.1f %d%n", name, median(ms), sorted[0], sorted[sorted.length - 1],
                requests[requests.length - 1]);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static void makeTree(ZooKeeper zk) throws Exception {
        Random random = new Random(1);
        zk.create(TOP, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            ops.add(Op.create(TOP + "/n" + i, data(random), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
            if (ops.size() == 1_000) {
                zk.multi(ops);
                ops.clear();
            }
        }
        if (!ops.isEmpty()) {
            zk.multi(ops);
        }
    }

    private static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }
}
