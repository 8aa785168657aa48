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
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Sections 1 to 4: cycles per second, latencies and requests per cycle of {@link ZkMutex} and
 * {@link ZkReadWriteLock} on one server, with the raw protocol floor for comparison.
 */
final class ThroughputBench {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final long WARMUP_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Uncontended: lock and floor cycles alternate one by one for this long. */
    private static final long UNCONTENDED_NANOS = TimeUnit.SECONDS.toNanos(8);
    private static final int REQUEST_COUNT_CYCLES = 200;
    private static final long CONTENDED_WINDOW_MILLIS = 5_000;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    /** Floor cycles/s divided by ZkMutex cycles/s, uncontended; set by {@link #uncontended()}. */
    double uncontendedRatio = Double.NaN;
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
        long cycles;
        long nanos;
        long requests;
        /** CPU time of the calling thread (not ZooKeeper's I/O threads). */
        long cpuNanos;
        final Samples latencies = new Samples();

        double perSecond() {
            return cycles / (nanos / 1e9);
        }

        double requestsPerCycle() {
            return (double) requests / REQUEST_COUNT_CYCLES;
        }
    }

    private interface Cycle {
        void run() throws Exception;
    }

    void uncontended() throws Exception {
        // 30 s sessions: a handle idle while the other loop runs alone does not ping for 10 s.
        try (ZkClient client = newClient(Duration.ofSeconds(30))) {
            ZooKeeper raw = rawHandle(connect, 30_000);
            try {
                String rawDir = "/bench/uncontended-raw";
                ensurePath(raw, rawDir);
                ZkMutex mutex = new ZkMutex(client, "/bench/uncontended");
                Cycle lockCycle = () -> {
                    mutex.lock();
                    mutex.unlock();
                };
                // The floor: the same three requests with the same node name shape and data size.
                Cycle floorCycle = () -> {
                    String attempt = UUID.randomUUID().toString().replace("-", "");
                    byte[] data = ("host=bench pid=" + ProcessHandle.current().pid() + " thread="
                            + Thread.currentThread().getName() + " requested=" + Instant.now())
                            .getBytes(StandardCharsets.UTF_8);
                    String path = raw.create(rawDir + "/lock-" + attempt + "-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.EPHEMERAL_SEQUENTIAL);
                    raw.getChildren(rawDir, false);
                    raw.delete(path, -1);
                };
                Run lib = new Run();
                Run floor = new Run();
                // Warm-up, then one cycle of each in turn: load from other processes hits both alike.
                alternate(lockCycle, floorCycle, WARMUP_NANOS, new Run(), new Run());
                alternate(lockCycle, floorCycle, UNCONTENDED_NANOS, lib, floor);
                // Requests per cycle: each loop alone between two server readings.
                lib.requests = requests(lockCycle, REQUEST_COUNT_CYCLES);
                floor.requests = requests(floorCycle, REQUEST_COUNT_CYCLES);
                uncontendedRatio = floor.perSecond() / lib.perSecond();
                uncontendedRequests = (double) lib.requests / REQUEST_COUNT_CYCLES;
                out.println();
                out.println("1. Uncontended lock()+unlock(), one thread, one client, " + UNCONTENDED_NANOS / 1_000_000_000
                        + " s after 1 s warm-up. ZkMutex and floor cycles alternate one by one, so load from other");
                out.println("   processes hits both alike; cycles/s = cycles / time spent in them. Requests per cycle from "
                        + REQUEST_COUNT_CYCLES + " cycles of each alone;");
                out.println("   caller CPU = CPU time per cycle of the calling thread (ZooKeeper's I/O threads not included).");
                out.printf("   %-44s %10s %9s %9s %13s %11s%n", "", "cycles/s", "p50 ms", "p99 ms", "requests/cyc",
                        "caller CPU");
                printRun("ZkMutex lock+unlock", lib);
                printRun("raw floor: create+getChildren+delete", floor);
                out.printf("   floor/ZkMutex throughput ratio: %.3f (target <= 1.15); p50 ratio %.3f%n",
                        uncontendedRatio,
                        lib.latencies.percentileMillis(50) / floor.latencies.percentileMillis(50));
                out.printf("   leftover nodes: %d%n", raw.getChildren("/bench/uncontended", false).size());
            } finally {
                raw.close();
            }
        }
    }

    private void printRun(String label, Run run) {
        out.printf("   %-44s %10.0f %9.2f %9.2f %13.2f %8.0f us%n", label, run.perSecond(),
                run.latencies.percentileMillis(50), run.latencies.percentileMillis(99), run.requestsPerCycle(),
                run.cpuNanos / 1e3 / run.cycles);
    }

    private static void alternate(Cycle a, Cycle b, long nanos, Run intoA, Run intoB) throws Exception {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            once(a, intoA);
            once(b, intoB);
        }
    }

    private static void once(Cycle cycle, Run into) throws Exception {
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        cycle.run();
        long took = System.nanoTime() - t0;
        into.cpuNanos += THREADS.getCurrentThreadCpuTime() - cpu0;
        into.latencies.add(took);
        into.nanos += took;
        into.cycles++;
    }

    /** @return requests the server received for {@code cycles} runs of {@code cycle} */
    private long requests(Cycle cycle, int cycles) throws Exception {
        ServerCounters.Snapshot before = counters.snap();
        for (int i = 0; i < cycles; i++) {
            cycle.run();
        }
        return counters.requests(before, counters.snap());
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
