package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.FourLetterWords;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * A lock per entity: every cycle a new key (a new directory), a new lock object, lock, unlock.
 * Section {@code entity}: against the raw-client floor in the same run, one cycle of each in turn;
 * section {@code dircount}: 50,000 distinct keys at full speed, the server's znode count during and
 * after.
 */
final class EntityBench {

    /**
     * Warm-up: cycles of each loop ({@code -Dbench.entityWarmup=N}, default 15,000), at most 90 s,
     * so that the library's code, run once per cycle, is measured after the JIT's optimising tier
     * has compiled it (the floor is mostly ZooKeeper's client code, compiled far sooner).
     */
    private static final long WARMUP_CYCLES = Long.getLong("bench.entityWarmup", 15_000);
    private static final long WARMUP_MAX_NANOS = TimeUnit.SECONDS.toNanos(90);
    private static final long MEASURE_NANOS = TimeUnit.SECONDS.toNanos(12);
    private static final int REQUEST_COUNT_CYCLES = 500;
    /** Keys of the directory-count run; {@code -Dbench.entityKeys=N}. */
    private static final int KEYS = Integer.getInteger("bench.entityKeys", 50_000);
    private static final int DIRCOUNT_THREADS = 4;

    private final String connect;
    private final ServerCounters counters;
    private final FourLetterWords flw;
    private final PrintStream out;
    private final PrintStream progress;

    /** ZkMutex cycles/s divided by the floor's; requests per cycle; directories left. */
    double throughputRatio = Double.NaN;
    double requestsPerCycle = Double.NaN;
    long directoriesLeft = -1;
    long znodeGrowth = Long.MAX_VALUE;

    EntityBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.flw = FourLetterWords.of(connect);
        this.out = out;
        this.progress = progress;
    }

    private interface Cycle {
        /** @return nanoseconds the acquiring part took */
        long run() throws Exception;
    }

    private static final class Run {
        final String label;
        long cycles;
        long nanos;
        long requests;
        long writes;
        long reads;
        final Samples acquire = new Samples();

        Run(String label) {
            this.label = label;
        }

        double perSecond() {
            return cycles / (nanos / 1e9);
        }
    }

    void perEntity() throws Exception {
        try (ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build()) {
            ZooKeeper raw = ThroughputBench.rawHandle(connect, 30_000);
            try {
                ThroughputBench.ensurePath(raw, "/bench/entity");
                ThroughputBench.ensurePath(raw, "/bench/entity-raw");
                AtomicLong keys = new AtomicLong();
                Cycle lockCycle = () -> {
                    ZkMutex mutex = new ZkMutex(client, "/bench/entity/e-" + keys.incrementAndGet());
                    long t0 = System.nanoTime();
                    mutex.lock();
                    long acquired = System.nanoTime() - t0;
                    mutex.unlock();
                    return acquired;
                };
                Cycle floor = () -> floorCycle(raw, "/bench/entity-raw/e-" + keys.incrementAndGet());
                List<Cycle> cycles = List.of(lockCycle, floor);
                Run lib = new Run("(a) ZkMutex, new key + new object: lock()+unlock()");
                Run raws = new Run("(b) floor: multi(dir,node)+children; multi(del node,dir)");
                List<Run> runs = List.of(lib, raws);
                List<Run> warm = List.of(new Run(""), new Run(""));
                long warmStart = System.nanoTime();
                while (warm.get(0).cycles < WARMUP_CYCLES && System.nanoTime() - warmStart < WARMUP_MAX_NANOS) {
                    alternate(cycles, TimeUnit.SECONDS.toNanos(1), warm);
                }
                long warmSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - warmStart);
                long warmCycles = warm.get(0).cycles;
                String loadBefore = Benchmarks.loadAverage();
                alternate(cycles, MEASURE_NANOS, runs);
                for (int i = 0; i < runs.size(); i++) {
                    long writes0 = flw.mntrLong("zk_cnt_updatelatency");
                    long reads0 = flw.mntrLong("zk_cnt_readlatency");
                    ServerCounters.Snapshot before = counters.snap();
                    for (int c = 0; c < REQUEST_COUNT_CYCLES; c++) {
                        cycles.get(i).run();
                    }
                    ServerCounters.Snapshot after = counters.snap();
                    runs.get(i).requests = counters.requests(before, after);
                    runs.get(i).writes = flw.mntrLong("zk_cnt_updatelatency") - writes0;
                    runs.get(i).reads = flw.mntrLong("zk_cnt_readlatency") - reads0;
                }
                throughputRatio = lib.perSecond() / raws.perSecond();
                requestsPerCycle = (double) lib.requests / REQUEST_COUNT_CYCLES;
                directoriesLeft = SessionPool.children(raw, "/bench/entity").size();
                long rawLeft = SessionPool.children(raw, "/bench/entity-raw").size();
                out.println();
                out.println("E. A lock per entity: one worker, every cycle a new key and a new lock object, " + MEASURE_NANOS
                        / 1_000_000_000 + " s after a warm-up of " + warmSeconds + " s (" + warmCycles
                        + " cycles of each; -Dbench.entityWarmup=CYCLES); the two loops take one cycle each in turn.");
                out.println("   Requests, writes and reads per cycle from " + REQUEST_COUNT_CYCLES
                        + " cycles of each alone (mntr: zk_packets_received, zk_cnt_updatelatency, zk_cnt_readlatency).");
                out.printf("   load average before / after: %s / %s%n", loadBefore, Benchmarks.loadAverage());
                out.printf("   %-58s %9s %12s %8s %8s %10s %10s%n", "", "cycles/s", "requests/cyc", "writes", "reads",
                        "acq p50", "acq p99");
                for (Run r : runs) {
                    out.printf("   %-58s %9.0f %12.2f %8.2f %8.2f %7.2f ms %7.2f ms%n", r.label, r.perSecond(),
                            (double) r.requests / REQUEST_COUNT_CYCLES, (double) r.writes / REQUEST_COUNT_CYCLES,
                            (double) r.reads / REQUEST_COUNT_CYCLES, r.acquire.percentileMillis(50),
                            r.acquire.percentileMillis(99));
                }
                out.printf("   ZkMutex / floor cycles/s: %.3f (target >= 0.9); requests per cycle %.2f (target <= 3.2);"
                        + " directories left: %d (ZkMutex), %d (floor) (target 0)%n", throughputRatio, requestsPerCycle,
                        directoriesLeft, rawLeft);
            } finally {
                raw.close();
            }
        }
    }

    /** The floor: multi(create dir CONTAINER, create node) and a pipelined getChildren; then multi(delete node, delete dir). */
    private static long floorCycle(ZooKeeper raw, String dir) throws Exception {
        byte[] data = ("host=bench pid=" + ProcessHandle.current().pid() + " thread=" + Thread.currentThread().getName()
                + " requested=" + Instant.now()).getBytes(StandardCharsets.UTF_8);
        String prefix = dir + "/lock-" + UUID.randomUUID().toString().replace("-", "") + "-";
        CreateOptions options = CreateOptions.newBuilder(ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL).build();
        CountDownLatch replies = new CountDownLatch(2);
        AtomicReference<String> made = new AtomicReference<>();
        AtomicReference<KeeperException.Code> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        raw.multi(List.of(Op.create(dir, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER),
                Op.create(prefix, data, options)), (rc, p, ctx, results) -> {
                    if (rc == 0) {
                        made.set(((OpResult.CreateResult) results.get(1)).getPath());
                    } else {
                        failed.set(KeeperException.Code.get(rc));
                    }
                    replies.countDown();
                }, null);
        raw.getChildren(dir, false, (AsyncCallback.ChildrenCallback) (rc, p, ctx, children) -> replies.countDown(), null);
        if (!replies.await(30, TimeUnit.SECONDS) || made.get() == null) {
            throw new IllegalStateException("floor create failed: " + failed.get());
        }
        long acquired = System.nanoTime() - t0;
        raw.multi(List.of(Op.delete(made.get(), -1), Op.delete(dir, -1)));
        return acquired;
    }

    private static void alternate(List<Cycle> cycles, long nanos, List<Run> into) throws Exception {
        int n = cycles.size();
        long end = System.nanoTime() + nanos;
        for (int round = 0; System.nanoTime() - end < 0; round++) {
            for (int k = 0; k < n; k++) {
                int i = (round + k) % n;
                long t0 = System.nanoTime();
                long acquired = cycles.get(i).run();
                into.get(i).nanos += System.nanoTime() - t0;
                into.get(i).acquire.add(acquired);
                into.get(i).cycles++;
            }
        }
    }

    /** {@link #KEYS} distinct keys locked once each by {@link #DIRCOUNT_THREADS} threads; zk_znode_count sampled. */
    void directoryCount() throws Exception {
        try (ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build()) {
            ZooKeeper raw = ThroughputBench.rawHandle(connect, 30_000);
            try {
                ThroughputBench.ensurePath(raw, "/bench/dircount");
                long start = flw.mntrLong("zk_znode_count");
                String loadBefore = Benchmarks.loadAverage();
                AtomicLong next = new AtomicLong();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                List<Thread> workers = new ArrayList<>();
                long t0 = System.nanoTime();
                for (int t = 0; t < DIRCOUNT_THREADS; t++) {
                    Thread w = new Thread(() -> {
                        try {
                            for (long k = next.getAndIncrement(); k < KEYS && failure.get() == null; k = next.getAndIncrement()) {
                                ZkMutex m = new ZkMutex(client, "/bench/dircount/order-" + k);
                                m.lock();
                                m.unlock();
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }, "dircount-" + t);
                    w.start();
                    workers.add(w);
                }
                long max = start;
                List<Long> samples = new ArrayList<>();
                while (workers.stream().anyMatch(Thread::isAlive)) {
                    TimeUnit.MILLISECONDS.sleep(1000);
                    long now = flw.mntrLong("zk_znode_count");
                    samples.add(now);
                    max = Math.max(max, now);
                    progress.printf("   dircount: %d keys, znodes %d%n", Math.min(next.get(), KEYS), now);
                }
                for (Thread w : workers) {
                    w.join();
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                if (failure.get() != null) {
                    throw new IllegalStateException("a worker failed", failure.get());
                }
                long end = flw.mntrLong("zk_znode_count");
                long left = SessionPool.children(raw, "/bench/dircount").size();
                znodeGrowth = Math.max(max, end) - start;
                out.println();
                out.printf("D. Directory count: %d distinct keys, each locked once (new ZkMutex, lock, unlock) by %d threads"
                        + " on one client, %.1f s (%.0f keys/s)%n", KEYS, DIRCOUNT_THREADS, seconds, KEYS / seconds);
                out.printf("   load average before / after: %s / %s%n", loadBefore, Benchmarks.loadAverage());
                out.printf("   zk_znode_count: at start %d, highest sampled during (every 1 s) %d, after %d; directories left"
                        + " under /bench/dircount: %d%n", start, max, end, left);
                out.printf("   samples: %s%n", samples);
            } finally {
                raw.close();
            }
        }
    }
}
