package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Section 6: many acquisitions pending at once on one client. One {@link ZkClient} and one {@link
 * ZkMutex} issue {@link #PENDING} {@code acquireAsync()} calls while another client holds the lock;
 * the benchmark counts threads and heap with all of them queued, then releases the holder and times
 * the queue draining, each grant releasing its lease at once.
 *
 * <p>Done twice, releasing each lease in two ways: handed to one dedicated thread, and in the
 * dependent action itself (which runs on the library's callback thread, and {@link ZkLease#release()}
 * waits there for the server's reply). Before both, a raw-client reference queues the same number
 * of nodes with one data watch each, so that the heap the in-process server and the raw ZooKeeper
 * client spend on them can be told from the library's.
 */
final class PendingBench {

    /** Pending acquisitions per round; {@code -Dbench.pending=N}. */
    static final int PENDING = Integer.getInteger("bench.pending", 10_000);
    private static final long LIMIT_NANOS = TimeUnit.MINUTES.toNanos(20);
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    private final PrintStream progress;
    private final List<Round> rounds = new ArrayList<>();
    private long rawHeapPerNode = Long.MIN_VALUE;

    PendingBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
        this.progress = progress;
    }

    /** How each granted lease is released. */
    private enum ReleaseMode {
        /** thenAccept hands {@code release()} to one dedicated thread. */
        EXECUTOR("release on 1 own thread"),
        /** thenAccept(lease -> lease.release()): on the library's callback thread. */
        IN_DEPENDENT("release in thenAccept");

        final String column;

        ReleaseMode(String column) {
            this.column = column;
        }
    }

    /** Threads and heap at one moment. */
    private record Footprint(int threads, Set<String> zkcoordThreads, Set<String> allThreads, long heapUsed) {

        static Footprint now() throws InterruptedException {
            long heap = heapAfterGc();
            Set<String> all = new TreeSet<>();
            Set<String> zkcoord = new TreeSet<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.isAlive()) {
                    all.add(t.getName() + "#" + t.getId());
                    if (t.getName().startsWith("zkcoord")) {
                        zkcoord.add(t.getName());
                    }
                }
            }
            return new Footprint(THREADS.getThreadCount(), zkcoord, all, heap);
        }
    }

    /** What one round measured. */
    private record Round(ReleaseMode mode, int n, String loadAtStart, String loadAtEnd, Footprint before, Footprint queued, Footprint after,
            double issueSeconds, long issueCpuNanos, double queueSeconds, long enqueueRequests, double grantSeconds,
            double releaseSeconds, long drainRequests, long drainFired, Samples intervals, long overlaps,
            long tokenDisorder, long early, long failures, int leftover, long watchesLeft) {

        double heapPerPending() {
            return (double) (queued.heapUsed - before.heapUsed) / n;
        }
    }

    void run() throws Exception {
        progress.println("   raw reference: " + PENDING + " nodes with a data watch each ...");
        rawHeapPerNode = rawReference(PENDING);
        for (ReleaseMode mode : ReleaseMode.values()) {
            progress.println("   " + PENDING + " pending, " + mode.column + " ...");
            rounds.add(round(mode, PENDING));
        }
        print();
    }

    // ------------------------------------------------------------------ the raw reference

    /**
     * A raw handle queues a holder node and {@code n} waiter nodes (the library's name shape and
     * data size), each waiter with a data watch (a watcher object of its own) on its predecessor:
     * what the server and a raw client keep for {@code n} waiters, with no lock library.
     *
     * @return used heap per waiter, after GC, in bytes
     */
    private long rawReference(int n) throws Exception {
        ZooKeeper raw = ThroughputBench.rawHandle(connect, 30_000);
        try {
            String dir = "/bench/pending-raw";
            ThroughputBench.ensurePath(raw, dir);
            long before = heapAfterGc();
            String[] paths = new String[n + 1];
            CountDownLatch created = new CountDownLatch(n + 1);
            AtomicInteger errors = new AtomicInteger();
            byte[] data = ownerData();
            for (int i = 0; i <= n; i++) {
                int me = i;
                raw.create(dir + "/lock-" + UUID.randomUUID().toString().replace("-", "") + "-", data,
                        ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, (rc, p, ctx, name, stat) -> {
                            if (rc != 0) {
                                errors.incrementAndGet();
                            }
                            paths[me] = name; // replies come in the order sent: sequence order
                            created.countDown();
                        }, null);
            }
            await(created, "raw creates");
            CountDownLatch watched = new CountDownLatch(n);
            AtomicLong fired = new AtomicLong();
            for (int i = 1; i <= n; i++) {
                raw.getData(paths[i - 1], event -> fired.incrementAndGet(), (rc, p, ctx, bytes, stat) -> {
                    if (rc != 0) {
                        errors.incrementAndGet();
                    }
                    watched.countDown();
                }, null);
            }
            await(watched, "raw watches");
            if (errors.get() != 0) {
                throw new IllegalStateException(errors.get() + " raw requests failed");
            }
            long after = heapAfterGc();
            return (after - before) / n;
        } finally {
            raw.close(); // the nodes go with the session
        }
    }

    // ------------------------------------------------------------------ one round

    private Round round(ReleaseMode mode, int n) throws Exception {
        String load = Benchmarks.loadAverage();
        String path = "/bench/pending-" + mode.name().toLowerCase().replace('_', '-');
        ExecutorService releaser = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bench-releaser");
            t.setDaemon(true);
            return t;
        });
        releaser.submit(() -> { }).get(); // started before the first count, in both modes alike
        ZooKeeper raw = ThroughputBench.rawHandle(connect, 30_000);
        try (ZkClient holderClient = newClient(); ZkClient client = newClient()) {
            ZkLease holder = new ZkMutex(holderClient, path).acquire();
            ZkMutex mutex = new ZkMutex(client, path);
            Drain drain = new Drain(n, mode, releaser);

            Footprint before = Footprint.now();
            ServerCounters.Snapshot s0 = counters.snap();
            long watchBase = s0.watchCount();
            List<CompletableFuture<ZkLease>> futures = new ArrayList<>(n);
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                CompletableFuture<ZkLease> f = mutex.acquireAsync();
                f.whenComplete(drain::granted);
                futures.add(f);
            }
            long issued = System.nanoTime();
            long issueCpu = THREADS.getCurrentThreadCpuTime() - cpu0;
            // Queued: every node on the server, and every waiter's watch on its predecessor.
            AtomicLong lastNodes = new AtomicLong();
            AtomicLong lastWatches = new AtomicLong();
            waitUntil(() -> {
                lastNodes.set(numChildren(raw, path));
                lastWatches.set(counters.snap().watchCount() - watchBase);
                return lastNodes.get() >= n + 1 && lastWatches.get() >= n;
            }, () -> "queued nodes " + lastNodes.get() + "/" + (n + 1) + ", watches " + lastWatches.get() + "/" + n);
            long queuedAt = System.nanoTime();
            ServerCounters.Snapshot s1 = counters.settled();
            Footprint queued = Footprint.now();

            // Drain: release the holder; each grant releases its lease at once.
            ServerCounters.Snapshot s2 = counters.snap();
            long r0 = System.nanoTime();
            drain.start(r0);
            holder.release();
            waitUntil(() -> drain.done.getCount() == 0,
                    () -> "granted " + drain.granted.get() + "/" + n + ", released " + drain.released.get());
            ServerCounters.Snapshot s3 = counters.settled();
            int leftover = numChildren(raw, path);
            long watchesLeft = s3.watchCount() - watchBase;
            for (CompletableFuture<ZkLease> f : futures) {
                if (!f.isDone() || f.isCompletedExceptionally()) {
                    drain.failures.incrementAndGet();
                }
            }
            futures.clear();
            if (drain.firstFailure.get() != null) {
                progress.println("      first failed acquisition: " + drain.firstFailure.get());
            }
            Footprint after = Footprint.now();
            return new Round(mode, n, load, Benchmarks.loadAverage(), before, queued, after, (issued - t0) / 1e9, issueCpu, (queuedAt - t0) / 1e9,
                    counters.requests(s0, s1), (drain.lastGrantAt - r0) / 1e9, (drain.lastReleaseAt - r0) / 1e9,
                    counters.requests(s2, s3), ServerCounters.watchesFired(s2, s3), drain.intervals,
                    drain.overlaps.get(), drain.tokenDisorder, drain.early.get(), drain.failures.get(), leftover,
                    watchesLeft);
        } finally {
            raw.close();
            releaser.shutdownNow();
        }
    }

    /** Follows the grants: one at a time, in token order, each released at once. */
    private static final class Drain {
        final int n;
        final ReleaseMode mode;
        final ExecutorService releaser;
        final CountDownLatch done;
        final AtomicInteger granted = new AtomicInteger();
        final AtomicInteger released = new AtomicInteger();
        final AtomicInteger holding = new AtomicInteger();
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong early = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        /** Guarded by this. */
        final Samples intervals = new Samples();
        long tokenDisorder;
        private long lastToken = Long.MIN_VALUE;
        private long previousAt;
        volatile long startedAt;
        volatile long lastGrantAt;
        volatile long lastReleaseAt;

        Drain(int n, ReleaseMode mode, ExecutorService releaser) {
            this.n = n;
            this.mode = mode;
            this.releaser = releaser;
            this.done = new CountDownLatch(n);
        }

        synchronized void start(long at) {
            startedAt = at;
            previousAt = at;
        }

        void granted(ZkLease lease, Throwable failure) {
            long now = System.nanoTime();
            if (failure != null) {
                failures.incrementAndGet();
                firstFailure.compareAndSet(null, failure);
                done.countDown();
                return;
            }
            if (startedAt == 0) {
                early.incrementAndGet(); // granted while the holder still held: must not happen
            }
            if (holding.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            synchronized (this) {
                if (lease.fencingToken() <= lastToken) {
                    tokenDisorder++;
                }
                lastToken = lease.fencingToken();
                intervals.add(now - previousAt);
                previousAt = now;
                lastGrantAt = now;
            }
            granted.incrementAndGet();
            Runnable release = () -> {
                holding.decrementAndGet();
                lease.release();
                lastReleaseAt = System.nanoTime();
                released.incrementAndGet();
                done.countDown();
            };
            if (mode == ReleaseMode.EXECUTOR) {
                releaser.execute(release);
            } else {
                release.run();
            }
        }
    }

    // ------------------------------------------------------------------ printing

    private void print() {
        out.println();
        out.println("6. " + PENDING + " pending acquireAsync() on ONE ZkClient and ONE ZkMutex, while another client holds"
                + " the lock; then the holder releases");
        out.println("   and each grant releases its lease at once, in the dependent (thenAccept) or handed to one dedicated"
                + " thread. 30 s sessions.");
        out.println("   threads: live threads of this JVM (Maven's, the in-process server's and the bench's included);"
                + " zkcoord*: the library's, named");
        out.println("   zkcoord-N-... (events, callbacks, and the ZooKeeper handle's SendThread/EventThread, made on the"
                + " events thread).");
        out.println("   heap: used heap after 4 x System.gc(), before issuing and with all queued, divided by " + PENDING
                + ": APPROXIMATE. It includes the");
        out.println("   in-process SERVER's share (nodes, data, watches); the raw row is that share plus a raw client's"
                + " (1 node + 1 data watch per waiter).");
        out.println("   queued = every node on the server and every waiter's watch set (polled every 100 ms).");
        String f = "   %-44s %26s %26s%n";
        out.printf(f, "", rounds.get(0).mode.column, rounds.size() > 1 ? rounds.get(1).mode.column : "");
        row(f, "load average (1 min) at start -> end", r -> r.loadAtStart.split(" ")[0] + " -> "
                + r.loadAtEnd.split(" ")[0]);
        row(f, "live threads: before -> " + PENDING + " pending", r -> r.before.threads + " -> " + r.queued.threads);
        row(f, "zkcoord* threads: before -> pending", r -> r.before.zkcoordThreads.size() + " -> "
                + r.queued.zkcoordThreads.size());
        row(f, "threads started while queueing", r -> String.valueOf(diff(r.queued.allThreads, r.before.allThreads)));
        row(f, "acquireAsync() x " + PENDING + ": returned in", r -> String.format("%.3f s", r.issueSeconds));
        row(f, "  caller CPU per call", r -> String.format("%.1f us", r.issueCpuNanos / 1e3 / r.n));
        row(f, "all queued after", r -> String.format("%.1f s", r.queueSeconds));
        row(f, "  requests per pending (mntr)", r -> String.format("%.2f", (double) r.enqueueRequests / r.n));
        row(f, "heap per pending, approx.", r -> String.format("%.0f bytes", r.heapPerPending()));
        row(f, "  raw reference (server + raw client)", r -> rawHeapPerNode + " bytes");
        row(f, "  library beyond the raw reference", r -> String.format("%.0f bytes", r.heapPerPending() - rawHeapPerNode));
        row(f, "drain: all granted after", r -> String.format("%.2f s", r.grantSeconds));
        row(f, "  grants per second", r -> String.format("%.0f", r.n / r.grantSeconds));
        row(f, "  interval between grants p50 / p99", r -> String.format("%.2f / %.2f ms",
                r.intervals.percentileMillis(50), r.intervals.percentileMillis(99)));
        row(f, "  all released after", r -> String.format("%.2f s", r.releaseSeconds));
        row(f, "  requests per grant (mntr, pings incl.)", r -> String.format("%.2f", (double) r.drainRequests / r.n));
        row(f, "  notifications per grant", r -> String.format("%.2f", (double) r.drainFired / r.n));
        row(f, "overlaps / tokens out of order / early", r -> r.overlaps + " / " + r.tokenDisorder + " / " + r.early);
        row(f, "failed acquisitions", r -> String.valueOf(r.failures));
        row(f, "nodes left / watches left", r -> r.leftover + " / " + r.watchesLeft);
        row(f, "live threads after the drain", r -> r.after.threads + " (zkcoord* " + r.after.zkcoordThreads.size() + ")");
        for (Round r : rounds) {
            out.printf("   zkcoord* threads with %d pending (%s): %s%n", r.n, r.mode.column, r.queued.zkcoordThreads);
        }
    }

    private interface Cell {
        String of(Round r);
    }

    private void row(String format, String label, Cell cell) {
        out.printf(format, label, cell.of(rounds.get(0)), rounds.size() > 1 ? cell.of(rounds.get(1)) : "");
    }

    private static Set<String> diff(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>();
        for (String s : a) {
            if (!b.contains(s)) {
                d.add(s.substring(0, s.lastIndexOf('#')));
            }
        }
        return d;
    }

    void printTargets(PrintStream to) {
        for (Round r : rounds) {
            int extra = r.queued.zkcoordThreads.size() - r.before.zkcoordThreads.size();
            boolean ok = extra <= 1 && r.leftover == 0 && r.overlaps == 0 && r.tokenDisorder == 0 && r.early == 0
                    && r.failures == 0;
            to.printf("   pending (%s): %d pending added %d zkcoord* threads (target: none per pending), %.0f grants/s,"
                    + " %d nodes left, %d overlaps, %d failures: %s%n", r.mode.column, r.n, extra, r.n / r.grantSeconds,
                    r.leftover, r.overlaps, r.failures, ok ? "met" : "NOT MET");
        }
    }

    // ------------------------------------------------------------------ helpers

    private ZkClient newClient() {
        return ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build();
    }

    private static byte[] ownerData() {
        return ("host=bench pid=" + ProcessHandle.current().pid() + " thread=" + Thread.currentThread().getName()
                + " requested=" + Instant.now()).getBytes(StandardCharsets.UTF_8);
    }

    private static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    private static int numChildren(ZooKeeper zk, String path) throws Exception {
        Stat stat = zk.exists(path, false);
        return stat == null ? 0 : stat.getNumChildren();
    }

    private interface Status {
        String get();
    }

    /** Polls every 100 ms, with a progress line every 10 s, for at most 20 minutes. */
    private void waitUntil(ThrowingCondition condition, Status status) throws Exception {
        long start = System.nanoTime();
        long nextReport = start + TimeUnit.SECONDS.toNanos(10);
        while (!condition.test()) {
            long now = System.nanoTime();
            if (now - start > LIMIT_NANOS) {
                throw new IllegalStateException("gave up after 20 minutes: " + status.get());
            }
            if (now - nextReport > 0) {
                progress.printf("      %.0f s: %s%n", (now - start) / 1e9, status.get());
                nextReport = now + TimeUnit.SECONDS.toNanos(10);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    private interface ThrowingCondition {
        boolean test() throws Exception;
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException(what + ": " + latch.getCount() + " replies missing after 10 minutes");
        }
    }
}
