package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Directories the library made and may remove, under contention across sessions. Section {@code
 * steady} ({@link #run()}): steady contention. k clients (k sessions), each with its own {@link ZkMutex} on one fresh path, each
 * looping {@code lock()}/{@code unlock()}. What the server processed is read from its counters
 * ({@code mntr}) in two windows: the first second (the first contention episode: the directory
 * made, and the releases whose last view of the queue was stale) and the following seconds (the
 * steady state). Every cycle makes one node and deletes it: 2 writes; a release that first tries
 * to remove the directory and is refused ({@code NOTEMPTY}) adds one, as does a create that finds
 * the directory gone ({@code NONODE}) and the transaction that makes it again. Section {@code
 * duplicate} ({@link #duplicates()}): two clients racing on each of many fresh keys, the duplicate
 * request of a lock per entity.
 */
final class ContentionBench {

    static final int[] CLIENTS = {2, 3, 8};
    private static final long FIRST_MILLIS = 1_000;
    private static final long STEADY_MILLIS = 5_000;

    private static final int FIRST = 0;
    private static final int STEADY = 1;
    private static final int STOP = 2;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    /** Writes per cycle in the steady window, the highest over every k; set by {@link #run()}. */
    double steadyWritesPerCycle = Double.NaN;
    /** Directories left by {@link #duplicates()}; -1 until it ran. */
    int duplicateDirectoriesLeft = -1;

    ContentionBench(String connect, ServerCounters counters, PrintStream out) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
    }

    /** What one window saw. */
    private record Phase(long cycles, double seconds, long requests, long writes, long reads) {
        double per(long n) {
            return (double) n / cycles;
        }
    }

    void run() throws Exception {
        out.println();
        out.println("S. Steady contention across sessions: k clients, each its own ZkMutex on one fresh path (the library makes"
                + " the directory), each looping lock()/unlock(); server counters (mntr) over the first " + FIRST_MILLIS
                + " ms (first episode) and the next " + STEADY_MILLIS + " ms (steady state). Every cycle is 2 writes (create,"
                + " delete); a refused removal (NOTEMPTY) adds 1");
        out.printf("   %-12s %-8s %8s %9s %13s %11s %10s %8s %s%n", "clients", "window", "cycles", "cycles/s",
                "requests/cyc", "writes/cyc", "reads/cyc", "overlap", "directory");
        double worst = 0;
        for (int k : CLIENTS) {
            worst = Math.max(worst, run(k));
        }
        steadyWritesPerCycle = worst;
    }

    /** @return writes per cycle in the steady window */
    private double run(int k) throws Exception {
        String path = "/bench/steady/clients-" + k;
        List<ZkClient> clients = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            clients.add(ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build());
        }
        AtomicInteger phase = new AtomicInteger(FIRST);
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        AtomicLong[] cycles = {new AtomicLong(), new AtomicLong(), new AtomicLong()};
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        ZooKeeper admin = new ZooKeeper(connect, 30_000, e -> { });
        try {
            admin.exists("/", false); // connected before the first window opens
            ServerCounters.Snapshot s0 = counters.snap();
            long t0 = System.nanoTime();
            for (int i = 0; i < k; i++) {
                ZkMutex lock = new ZkMutex(clients.get(i), path);
                Thread t = new Thread(() -> {
                    try {
                        while (phase.get() != STOP) {
                            lock.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                cycles[phase.get()].incrementAndGet();
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "steady-" + k + "-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            TimeUnit.MILLISECONDS.sleep(FIRST_MILLIS);
            long czxid1 = czxid(admin, path); // one read, in the first window
            phase.set(STEADY);
            ServerCounters.Snapshot s1 = counters.snap();
            long t1 = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(STEADY_MILLIS);
            phase.set(STOP);
            ServerCounters.Snapshot s2 = counters.snap();
            long t2 = System.nanoTime();
            long czxid2 = czxid(admin, path);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(60));
                if (t.isAlive()) {
                    throw new IllegalStateException(t.getName() + " did not stop within 60 s");
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a benchmark thread failed", failure.get());
            }
            Phase first = phase(cycles[FIRST].get(), t0, t1, s0, s1);
            Phase steady = phase(cycles[STEADY].get(), t1, t2, s1, s2);
            print(k + " clients", "first", first, overlaps.get(), "");
            print("", "steady", steady, overlaps.get(), czxid1 == czxid2 && czxid1 != 0 ? "kept through the window"
                    : "removed and made again in the window");
            long after = czxid(admin, path);
            out.printf("   %-12s after the run: %s%n", "", after == 0 ? "directory removed"
                    : "directory left (" + children(admin, path) + " nodes) for the container reaper");
            return steady.per(steady.writes());
        } finally {
            phase.set(STOP);
            for (ZkClient c : clients) {
                c.close();
            }
            admin.close();
        }
    }

    static final int DUPLICATE_KEYS = 500;
    /** How long each client holds: the work a lock per entity guards (a registration's insert, say). */
    private static final long DUPLICATE_HOLD_MILLIS = 5;

    /**
     * Two clients, each locking every one of {@link #DUPLICATE_KEYS} fresh keys at the same moment
     * (a new {@link ZkMutex} each time), holding it {@value #DUPLICATE_HOLD_MILLIS} ms and
     * unlocking: the first to queue holds on a read of its node alone and is refused its removal
     * when the other queued meanwhile; the other is granted by its watch on a view of its node
     * alone, and its release, the last, removes the directory. Requests per key and directories
     * left.
     */
    void duplicates() throws Exception {
        String root = "/bench/duplicate";
        List<ZkClient> clients = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            clients.add(ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build());
        }
        ZooKeeper admin = new ZooKeeper(connect, 30_000, e -> { });
        CyclicBarrier together = new CyclicBarrier(2);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        try {
            admin.exists("/", false);
            ServerCounters.Snapshot s0 = counters.snap();
            long t0 = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (ZkClient c : clients) {
                Thread t = new Thread(() -> {
                    try {
                        for (int k = 0; k < DUPLICATE_KEYS; k++) {
                            ZkMutex lock = new ZkMutex(c, root + "/key-" + k);
                            together.await(30, TimeUnit.SECONDS);
                            lock.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                TimeUnit.MILLISECONDS.sleep(DUPLICATE_HOLD_MILLIS);
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        together.reset();
                    }
                }, "duplicate-" + threads.size());
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(5));
                if (t.isAlive()) {
                    throw new IllegalStateException(t.getName() + " did not finish within 5 minutes");
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a benchmark thread failed", failure.get());
            }
            ServerCounters.Snapshot s1 = counters.snap();
            long t1 = System.nanoTime();
            int left = children(admin, root);
            out.println();
            out.println("S2. Duplicate requests: 2 clients lock each of " + DUPLICATE_KEYS + " fresh keys at the same moment"
                    + " (a new ZkMutex each), hold " + DUPLICATE_HOLD_MILLIS + " ms, unlock; server counters (mntr)");
            out.printf("   %-10s %12s %11s %10s %12s %14s %8s%n", "keys", "requests/key", "writes/key", "reads/key",
                    "keys/s", "dirs left", "overlap");
            out.printf("   %-10d %12.2f %11.2f %10.2f %12.0f %14d %8d%n", DUPLICATE_KEYS,
                    (double) counters.requests(s0, s1) / DUPLICATE_KEYS, (double) (s1.writes() - s0.writes()) / DUPLICATE_KEYS,
                    (double) (s1.reads() - s0.reads()) / DUPLICATE_KEYS, DUPLICATE_KEYS / ((t1 - t0) / 1e9), left,
                    overlaps.get());
            duplicateDirectoriesLeft = left;
        } finally {
            for (ZkClient c : clients) {
                c.close();
            }
            admin.close();
        }
    }

    private Phase phase(long cycles, long t0, long t1, ServerCounters.Snapshot a, ServerCounters.Snapshot b) {
        return new Phase(cycles, (t1 - t0) / 1e9, counters.requests(a, b), b.writes() - a.writes(), b.reads() - a.reads());
    }

    private void print(String label, String window, Phase p, long overlaps, String note) {
        out.printf("   %-12s %-8s %8d %9.0f %13.2f %11.2f %10.2f %8d %s%n", label, window, p.cycles(),
                p.cycles() / p.seconds(), p.per(p.requests()), p.per(p.writes()), p.per(p.reads()), overlaps, note);
    }

    /** @return the directory's czxid, or 0 if it does not exist */
    private static long czxid(ZooKeeper zk, String path) throws Exception {
        Stat stat = zk.exists(path, false);
        return stat == null ? 0 : stat.getCzxid();
    }

    private static int children(ZooKeeper zk, String path) throws Exception {
        try {
            return zk.getChildren(path, false).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }
}
