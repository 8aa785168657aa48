package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Sections 1 to 4: cycles per second, latencies and requests per cycle of {@link ZkMutex} and
 * {@link ZkReadWriteLock} on one server, with two raw protocol floors for comparison (the three
 * requests one after the other, and create+getChildren pipelined in one round trip).
 */
final class ThroughputBench {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.ThreadMXBean ALLOCATION = (com.sun.management.ThreadMXBean) THREADS;
    private static final long WARMUP_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Uncontended: lock and floor cycles alternate one by one for this long. */
    private static final long UNCONTENDED_NANOS = TimeUnit.SECONDS.toNanos(12);
    /**
     * Uncontended warm-up: cycles of each loop ({@code -Dbench.uncontendedWarmup=N}, default
     * 15,000), and at most {@link #UNCONTENDED_WARMUP_MAX_NANOS}. A method run once per cycle
     * reaches the JIT's optimising tier (C2) after some thousands of calls and a place in the
     * compile queue: at the few hundred cycles per second each loop gets here, 10 to 40 s. A
     * shorter warm-up measures the library's code, which runs once per cycle, in the JIT's
     * profiling tier against the ZooKeeper client's code, which both sides run and so is compiled
     * first. docs/herd-effect.md, section 14 (Hot path), shows the caller's CPU per cycle falling
     * over the first 20 s.
     */
    private static final long UNCONTENDED_WARMUP_CYCLES = Long.getLong("bench.uncontendedWarmup", 15_000);
    private static final long UNCONTENDED_WARMUP_MAX_NANOS = TimeUnit.SECONDS.toNanos(90);
    private static final int REQUEST_COUNT_CYCLES = 200;
    private static final long CONTENDED_WINDOW_MILLIS = 5_000;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    /** ZkMutex cycles/s divided by the one-round-trip floor's, uncontended; set by {@link #uncontended()}. */
    double uncontendedThroughputRatio = Double.NaN;
    /** ZkMutex acquire p50 divided by the one-round-trip floor's, uncontended; set by {@link #uncontended()}. */
    double uncontendedAcquireRatio = Double.NaN;
    /** ZkMutex requests per uncontended cycle; set by {@link #uncontended()}. */
    double uncontendedRequests = Double.NaN;
    /** Requests per cycle of 16 threads on one ZkMutex; set by {@link #sixteenThreadsOneClient()}. */
    double sixteenThreadsRequests = Double.NaN;

    ThroughputBench(String connect, ServerCounters counters, PrintStream out) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
    }

    // ------------------------------------------------------------------ 1. uncontended

    /** What a measured loop did. */
    private static final class Run {
        final String label;
        long cycles;
        long nanos;
        long requests;
        long fsyncs;
        /** CPU time of the calling thread (not ZooKeeper's I/O threads). */
        long cpuNanos;
        /** Bytes allocated by the calling thread. */
        long allocatedBytes;
        /** Whole cycles. */
        final Samples latencies = new Samples();
        /** The acquiring part of each cycle: lock(), or create up to the children's reply. */
        final Samples acquire = new Samples();
        /** The rest of each cycle: unlock(), or the delete. */
        final Samples release = new Samples();

        Run(String label) {
            this.label = label;
        }

        double perSecond() {
            return cycles / (nanos / 1e9);
        }

        double requestsPerCycle() {
            return (double) requests / REQUEST_COUNT_CYCLES;
        }

        double fsyncsPerCycle() {
            return fsyncs < 0 ? Double.NaN : (double) fsyncs / REQUEST_COUNT_CYCLES;
        }

        double acquireP50() {
            return acquire.percentileMillis(50);
        }
    }

    /** One acquire-and-release cycle. */
    private interface Cycle {
        /** @return nanoseconds the acquiring part took */
        long run() throws Exception;
    }

    void uncontended() throws Exception {
        // 30 s sessions: a handle idle while the other loops run alone does not ping for 10 s.
        try (ZkClient client = newClient(Duration.ofSeconds(30))) {
            ZooKeeper raw = rawHandle(connect, 30_000);
            try {
                String rawDir = "/bench/uncontended-raw";
                ensurePath(raw, rawDir);
                ZkMutex mutex = new ZkMutex(client, "/bench/uncontended");
                Cycle lockCycle = () -> {
                    long t0 = System.nanoTime();
                    mutex.lock();
                    long acquired = System.nanoTime() - t0;
                    mutex.unlock();
                    return acquired;
                };
                // The floors: the same three requests with the same node name shape and data size.
                // Their acquiring part starts before the node's name and data are made, as lock()'s does.
                Cycle sequentialFloor = () -> {
                    long t0 = System.nanoTime();
                    String prefix = rawDir + "/lock-" + attemptId() + "-";
                    byte[] data = ownerData();
                    String path = raw.create(prefix, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
                    raw.getChildren(rawDir, false);
                    long acquired = System.nanoTime() - t0;
                    raw.delete(path, -1);
                    return acquired;
                };
                Cycle oneRoundTripFloor = () -> {
                    long t0 = System.nanoTime();
                    String prefix = rawDir + "/lock-" + attemptId() + "-";
                    byte[] data = ownerData();
                    PipelinedEnqueue enqueue = new PipelinedEnqueue();
                    raw.create(prefix, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, enqueue,
                            null);
                    raw.getChildren(rawDir, false, enqueue, null); // sent before the create's reply
                    String path = enqueue.await();
                    long acquired = System.nanoTime() - t0;
                    raw.delete(path, -1);
                    return acquired;
                };
                Run lib = new Run("(a) ZkMutex lock()+unlock()");
                Run sequential = new Run("(b) floor, sequential: create; children; delete");
                Run oneRtt = new Run("(c) floor, 1 RTT: create+children; delete");
                List<Cycle> cycles = List.of(lockCycle, sequentialFloor, oneRoundTripFloor);
                // Warm-up, then one cycle of each in turn: load from other processes hits all alike.
                List<Run> warm = List.of(new Run(""), new Run(""), new Run(""));
                long warmStart = System.nanoTime();
                while (warm.get(0).cycles < UNCONTENDED_WARMUP_CYCLES
                        && System.nanoTime() - warmStart < UNCONTENDED_WARMUP_MAX_NANOS) {
                    alternate(cycles, TimeUnit.SECONDS.toNanos(1), warm);
                }
                long warmSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - warmStart);
                List<Run> runs = List.of(lib, sequential, oneRtt);
                alternate(cycles, UNCONTENDED_NANOS, runs);
                // Requests per cycle: each loop alone between two server readings.
                for (int i = 0; i < runs.size(); i++) {
                    ServerCounters.Snapshot before = counters.snap();
                    for (int c = 0; c < REQUEST_COUNT_CYCLES; c++) {
                        cycles.get(i).run();
                    }
                    ServerCounters.Snapshot after = counters.snap();
                    runs.get(i).requests = counters.requests(before, after);
                    runs.get(i).fsyncs = ServerCounters.fsyncs(before, after);
                }
                uncontendedThroughputRatio = lib.perSecond() / oneRtt.perSecond();
                uncontendedAcquireRatio = lib.acquireP50() / oneRtt.acquireP50();
                uncontendedRequests = lib.requestsPerCycle();
                out.println();
                out.println("1. Uncontended, one thread, one client (and one raw handle), " + UNCONTENDED_NANOS / 1_000_000_000
                        + " s after a warm-up of " + warm.get(0).cycles + " cycles each in " + warmSeconds
                        + " s (-Dbench.uncontendedWarmup=CYCLES). The three loops take one cycle each in turn (the first of");
                out.println("   each round rotating), so load from other processes hits all alike; cycles/s = cycles / time"
                        + " spent in them. acquire = lock(), or from");
                out.println("   making the node's name and data to the children's reply. Requests and fsyncs per cycle from "
                        + REQUEST_COUNT_CYCLES + " cycles of each alone (mntr);");
                out.println("   caller CPU, caller bytes = CPU time and bytes allocated per cycle by the calling thread (ZooKeeper's"
                        + " I/O and event threads not included).");
                out.println("   (c) sends the create (Create2Callback) and the getChildren back to back, waits for both"
                        + " replies, then deletes synchronously.");
                out.printf("   %-48s %9s %10s %10s %10s %12s %10s %11s%n", "", "cycles/s", "acq p50", "acq p99",
                        "cycle p50", "requests/cyc", "fsyncs/cyc", "caller CPU", "caller bytes");
                for (Run r : runs) {
                    printRun(r);
                }
                out.printf("   %-48s %9s %10s %10s %10s %10s %10s%n", "where the time goes, ms", "acq mean", "rel mean",
                        "rel p50", "cycle mean", "cycle p99", "cycle max");
                for (Run r : runs) {
                    out.printf("   %-48s %9.3f %10.3f %10.3f %10.3f %10.3f %10.3f%n", r.label, r.acquire.meanMillis(),
                            r.release.meanMillis(), r.release.percentileMillis(50), r.latencies.meanMillis(),
                            r.latencies.percentileMillis(99), r.latencies.percentileMillis(100));
                }
                out.printf("   ZkMutex / 1-RTT floor: cycles/s %.3f (target >= 0.95: %s), acquire p50 %.3f (target <= 1.1:"
                        + " %s), caller CPU +%.0f us per cycle%n", uncontendedThroughputRatio,
                        uncontendedThroughputRatio >= 0.95 ? "met" : "NOT MET", uncontendedAcquireRatio,
                        uncontendedAcquireRatio <= 1.1 ? "met" : "NOT MET",
                        (lib.cpuNanos / (double) lib.cycles - oneRtt.cpuNanos / (double) oneRtt.cycles) / 1e3);
                out.printf("   1-RTT floor / sequential floor: cycles/s %.3f, acquire p50 %.3f%n",
                        oneRtt.perSecond() / sequential.perSecond(), oneRtt.acquireP50() / sequential.acquireP50());
                out.printf("   ZkMutex / sequential floor: cycles/s %.3f, acquire p50 %.3f%n",
                        lib.perSecond() / sequential.perSecond(), lib.acquireP50() / sequential.acquireP50());
                out.printf("   load average after the section: %s%n", Benchmarks.loadAverage());
                out.printf("   leftover nodes: %d (ZkMutex), %d (floors)%n", SessionPool.children(raw, "/bench/uncontended").size(),
                        SessionPool.children(raw, rawDir).size());
            } finally {
                raw.close();
            }
        }
    }

    private static String attemptId() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /** The same shape and size as the library's node data ({@code OwnerInfo}). */
    private static byte[] ownerData() {
        return ("host=bench pid=" + ProcessHandle.current().pid() + " thread=" + Thread.currentThread().getName()
                + " requested=" + Instant.now()).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The replies of a pipelined create and getChildren on one handle. They arrive in the order
     * sent, on the handle's event thread; the list must already hold the new node.
     */
    private static final class PipelinedEnqueue implements AsyncCallback.Create2Callback, AsyncCallback.ChildrenCallback {
        private final CountDownLatch replies = new CountDownLatch(2);
        private volatile int createRc = -1;
        private volatile int childrenRc = -1;
        private volatile String path;
        private volatile List<String> children;

        @Override
        public void processResult(int rc, String p, Object ctx, String name, Stat stat) {
            createRc = rc;
            path = name;
            replies.countDown();
        }

        @Override
        public void processResult(int rc, String p, Object ctx, List<String> names) {
            childrenRc = rc;
            children = names;
            replies.countDown();
        }

        /** @return the created node's path, once both replies are in */
        String await() throws Exception {
            if (!replies.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no reply to the pipelined create/getChildren in 30 s");
            }
            if (createRc != KeeperException.Code.OK.intValue()) {
                throw KeeperException.create(KeeperException.Code.get(createRc), path);
            }
            if (childrenRc != KeeperException.Code.OK.intValue()) {
                throw KeeperException.create(KeeperException.Code.get(childrenRc));
            }
            if (!children.contains(path.substring(path.lastIndexOf('/') + 1))) {
                throw new IllegalStateException("the pipelined getChildren did not see " + path + ": " + children);
            }
            return path;
        }
    }

    private void printRun(Run run) {
        out.printf("   %-48s %9.0f %7.2f ms %7.2f ms %7.2f ms %12.2f %10.2f %8.0f us %12.0f%n", run.label, run.perSecond(),
                run.acquireP50(), run.acquire.percentileMillis(99), run.latencies.percentileMillis(50),
                run.requestsPerCycle(), run.fsyncsPerCycle(), run.cpuNanos / 1e3 / run.cycles,
                run.allocatedBytes / (double) run.cycles);
    }

    /** One cycle of each in turn; round r starts with loop r mod n. */
    private static void alternate(List<Cycle> cycles, long nanos, List<Run> into) throws Exception {
        int n = cycles.size();
        long end = System.nanoTime() + nanos;
        for (int round = 0; System.nanoTime() - end < 0; round++) {
            for (int k = 0; k < n; k++) {
                int i = (round + k) % n;
                once(cycles.get(i), into.get(i));
            }
        }
    }

    private static void once(Cycle cycle, Run into) throws Exception {
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long bytes0 = ALLOCATION.getCurrentThreadAllocatedBytes();
        long t0 = System.nanoTime();
        long acquired = cycle.run();
        long took = System.nanoTime() - t0;
        into.allocatedBytes += ALLOCATION.getCurrentThreadAllocatedBytes() - bytes0;
        into.cpuNanos += THREADS.getCurrentThreadCpuTime() - cpu0;
        into.latencies.add(took);
        into.acquire.add(acquired);
        into.release.add(took - acquired);
        into.nanos += took;
        into.cycles++;
    }

    // ------------------------------------------------------------------ 2 and 4. contended mutex

    /** Who released the lock last, and when (System.nanoTime()). */
    private record Release(int thread, long at) {
    }

    private static final int WARMUP = 0;
    private static final int MEASURE = 1;
    private static final int STOP = 2;

    /** Section 2: 8 clients, one thread each, on one mutex path. */
    void eightClientsOneMutex() throws Exception {
        List<ZkClient> clients = newClients(8);
        try {
            List<ZkLock> locks = new ArrayList<>();
            for (ZkClient c : clients) {
                locks.add(new ZkMutex(c, "/bench/mutex-8-clients"));
            }
            out.println();
            out.println("2. 8 clients (8 sessions), one thread each, one ZkMutex path; " + CONTENDED_WINDOW_MILLIS
                    + " ms window after 1 s warm-up");
            printContendedHeader();
            printContended("8 clients x 1 thread", runMutex(locks));
        } finally {
            closeAll(clients);
        }
    }

    /** Section 4: 16 threads sharing one ZkMutex object on one client, next to 16 separate clients. */
    void sixteenThreadsOneClient() throws Exception {
        out.println();
        out.println("4. 16 threads sharing ONE ZkMutex on ONE client, and for reference 16 clients x 1 thread; "
                + CONTENDED_WINDOW_MILLIS + " ms window each (target: <= 5 requests/cycle, as 16 clients)");
        printContendedHeader();
        try (ZkClient client = newClient(Duration.ofSeconds(10))) {
            ZkMutex shared = new ZkMutex(client, "/bench/mutex-16-threads");
            List<ZkLock> locks = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                locks.add(shared);
            }
            Contended r = runMutex(locks);
            sixteenThreadsRequests = (double) r.requests() / r.cycles();
            printContended("1 client, 1 ZkMutex, 16 threads", r);
        }
        List<ZkClient> clients = newClients(16);
        try {
            List<ZkLock> locks = new ArrayList<>();
            for (ZkClient c : clients) {
                locks.add(new ZkMutex(c, "/bench/mutex-16-clients"));
            }
            printContended("16 clients x 1 thread (reference)", runMutex(locks));
        } finally {
            closeAll(clients);
        }
    }

    /** Result of a contended run. */
    private record Contended(long cycles, long handoffs, double seconds, long requests, Samples handoffLatency,
            long violations, int leftover) {
    }

    private void printContendedHeader() {
        out.printf("   %-36s %9s %11s %12s %12s %13s %6s%n", "", "cycles/s", "handoffs/s", "handoff p50",
                "handoff p99", "requests/cyc", "overlap");
    }

    private void printContended(String label, Contended r) {
        out.printf("   %-36s %9.0f %11.0f %9.2f ms %9.2f ms %13.2f %6d%n", label, r.cycles / r.seconds,
                r.handoffs / r.seconds, r.handoffLatency.percentileMillis(50),
                r.handoffLatency.percentileMillis(99), (double) r.requests / r.cycles, r.violations);
        if (r.leftover != 0) {
            out.printf("   WARNING: %d nodes left in the lock directory%n", r.leftover);
        }
    }

    /**
     * One thread per entry of {@code locks} loops lock()/unlock(). A handoff is an acquisition whose
     * previous release was by another thread; its latency runs from just before that thread's
     * unlock() to just after this thread's lock() returned, both by System.nanoTime().
     */
    private Contended runMutex(List<ZkLock> locks) throws Exception {
        int n = locks.size();
        AtomicInteger phase = new AtomicInteger(WARMUP);
        AtomicReference<Release> last = new AtomicReference<>(new Release(-1, 0));
        AtomicInteger inside = new AtomicInteger();
        AtomicLong violations = new AtomicLong();
        long[] cycles = new long[n];
        long[] handoffs = new long[n];
        Samples[] latencies = new Samples[n];
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < n; i++) {
            int me = i;
            ZkLock lock = locks.get(i);
            latencies[i] = new Samples();
            threads.add(start("mutex-" + i, failure, () -> {
                while (phase.get() != STOP) {
                    lock.lock();
                    long acquired = System.nanoTime();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                        if (phase.get() == MEASURE) {
                            cycles[me]++;
                            Release r = last.get();
                            if (r.thread() >= 0 && r.thread() != me) {
                                handoffs[me]++;
                                latencies[me].add(acquired - r.at());
                            }
                        }
                        inside.decrementAndGet();
                    } finally {
                        last.set(new Release(me, System.nanoTime()));
                        lock.unlock();
                    }
                }
            }));
        }
        Window w = window(phase, threads, failure);
        Samples all = new Samples();
        for (Samples s : latencies) {
            all.addAll(s);
        }
        return new Contended(sum(cycles), sum(handoffs), w.seconds, w.requests, all, violations.get(),
                leftover(locks.get(0).path()));
    }

    // ------------------------------------------------------------------ 3. read/write 90/10

    /** Section 3: 8 clients on one read/write lock path, 90 % reads and 10 % writes. */
    void eightClientsReadWrite() throws Exception {
        List<ZkClient> clients = newClients(8);
        try {
            String path = "/bench/rw-8-clients";
            AtomicInteger phase = new AtomicInteger(WARMUP);
            AtomicInteger readers = new AtomicInteger();
            AtomicInteger writers = new AtomicInteger();
            AtomicLong violations = new AtomicLong();
            long[] reads = new long[clients.size()];
            long[] writes = new long[clients.size()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < clients.size(); i++) {
                int me = i;
                ZkReadWriteLock rw = new ZkReadWriteLock(clients.get(i), path);
                threads.add(start("rw-" + i, failure, () -> {
                    while (phase.get() != STOP) {
                        boolean read = ThreadLocalRandom.current().nextInt(10) != 0;
                        ZkLock lock = read ? rw.readLock() : rw.writeLock();
                        lock.lock();
                        try {
                            // Mark oneself first, then look at the other side: two that overlap see each other.
                            if (read) {
                                readers.incrementAndGet();
                                if (writers.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                readers.decrementAndGet();
                            } else {
                                if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                writers.decrementAndGet();
                            }
                            if (phase.get() == MEASURE) {
                                if (read) {
                                    reads[me]++;
                                } else {
                                    writes[me]++;
                                }
                            }
                        } finally {
                            lock.unlock();
                        }
                    }
                }));
            }
            Window w = window(phase, threads, failure);
            long r = sum(reads);
            long wr = sum(writes);
            out.println();
            out.println("3. 8 clients (8 sessions), one thread each, one ZkReadWriteLock path, 90 % reads / 10 % "
                    + "writes; " + CONTENDED_WINDOW_MILLIS + " ms window after 1 s warm-up");
            out.printf("   %-36s %9s %9s %9s %13s %6s%n", "", "cycles/s", "reads/s", "writes/s", "requests/cyc",
                    "overlap");
            out.printf("   %-36s %9.0f %9.0f %9.0f %13.2f %6d%n", "8 clients x 1 thread", (r + wr) / w.seconds,
                    r / w.seconds, wr / w.seconds, (double) w.requests / (r + wr), violations.get());
            int left = leftover(path);
            if (left != 0) {
                out.printf("   WARNING: %d nodes left in the lock directory%n", left);
            }
        } finally {
            closeAll(clients);
        }
    }

    // ------------------------------------------------------------------ helpers

    private record Window(double seconds, long requests) {
    }

    /** Warm up, measure one window between two server readings, stop, and join the threads. */
    private Window window(AtomicInteger phase, List<Thread> threads, AtomicReference<Throwable> failure)
            throws Exception {
        TimeUnit.NANOSECONDS.sleep(WARMUP_NANOS);
        ServerCounters.Snapshot before = counters.snap();
        long t0 = System.nanoTime();
        phase.set(MEASURE);
        TimeUnit.MILLISECONDS.sleep(CONTENDED_WINDOW_MILLIS);
        phase.set(STOP);
        long t1 = System.nanoTime();
        ServerCounters.Snapshot after = counters.snap();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop within 60 s");
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a benchmark thread failed", failure.get());
        }
        return new Window((t1 - t0) / 1e9, counters.requests(before, after));
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread start(String name, AtomicReference<Throwable> failure, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private int leftover(String path) throws Exception {
        ZooKeeper zk = rawHandle();
        try {
            return zk.getChildren(path, false).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } finally {
            zk.close();
        }
    }

    private static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += v;
        }
        return s;
    }

    private ZkClient newClient(Duration sessionTimeout) {
        return ZkClient.builder().connectString(connect).sessionTimeout(sessionTimeout).build();
    }

    private List<ZkClient> newClients(int n) {
        List<ZkClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(newClient(Duration.ofSeconds(10)));
        }
        return clients;
    }

    static void closeAll(List<ZkClient> clients) {
        for (ZkClient c : clients) {
            c.close();
        }
    }

    /** A raw ZooKeeper handle, connected. */
    private ZooKeeper rawHandle() throws Exception {
        return rawHandle(connect);
    }

    static ZooKeeper rawHandle(String connect) throws Exception {
        return rawHandle(connect, 10_000);
    }

    static ZooKeeper rawHandle(String connect, int sessionTimeoutMillis) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, sessionTimeoutMillis, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(15, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("no connection to " + connect);
        }
        return zk;
    }

    /** Creates {@code path} and its parents as persistent nodes where missing. */
    static void ensurePath(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        int slash = 0;
        while (slash >= 0) {
            slash = path.indexOf('/', slash + 1);
            String prefix = slash < 0 ? path : path.substring(0, slash);
            try {
                zk.create(prefix, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // there already
            }
        }
    }
}
