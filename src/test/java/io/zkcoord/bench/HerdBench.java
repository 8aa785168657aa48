package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.HoldingThread;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * Section 5, the herd table: for N waiters queued behind a holder, what one release costs the
 * server, read from its own counters ({@code mntr}) just before the release and just after the
 * handoff has settled.
 *
 * <p>Sessions: the holder (and, for the read/write variants, both writers) use session 0; the N
 * waiters are spread round-robin over {@code min(N, 100)} further sessions, so up to 100 waiters
 * each have a session of their own and 1000 waiters share 100 sessions, 10 each. The library
 * variants run one thread per waiter (up to 1000 threads); the raw variants run one callback object
 * per waiter on the session's event thread. ZooKeeper sends one notification per session and
 * watched path however many watchers of that session wait on it, and the client then runs every
 * one of those watchers: the table shows both numbers.
 *
 * <p>The library variants measure the steady state. (a) first runs one contention episode on its
 * fresh directory ({@link #firstEpisode}): there a release whose view of the queue was its node
 * alone reads the queue before it deletes its node, once per client (section {@code handoff}
 * measures those first handoffs). (c)'s W0 and W1 share one lock object, whose release removes
 * nothing while another of its acquisitions runs.
 */
final class HerdBench {

    static final int[] QUEUE_LENGTHS = {1, 10, 100, 1000};
    static final int MAX_WAITER_SESSIONS = 100;
    private static final Duration SETUP_LIMIT = Duration.ofSeconds(120);
    private static final Duration SETTLE_LIMIT = Duration.ofSeconds(60);
    /** A ZooKeeper client pings after 10 s without sending; windows must stay shorter. */
    private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(9);

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    private final PrintStream progress;
    private final List<Row> rows = new ArrayList<>();
    private List<ZkClient> pool;
    private long touchedAt;

    HerdBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
        this.progress = progress;
    }

    /** One measured release. {@code callbacks} is -1 where the benchmark cannot see them (library). */
    private record Row(String variant, int waiters, int sessions, String release, long fired, long callbacks,
            long requests, String note) {
    }

    void run() throws Exception {
        pool = openPool(1 + MAX_WAITER_SESSIONS);
        try {
            for (int n : QUEUE_LENGTHS) {
                guarded("(a) ZkMutex", n, () -> mutex(n));
                guarded("(b) naive: children watch", n, () -> naive(n));
                guarded("(c) ZkReadWriteLock", n, () -> readWrite(n));
                guarded("(d) readers watch 1st write", n, () -> firstWrite(n));
            }
        } finally {
            closePool();
        }
        print();
    }

    private interface Body {
        void run() throws Exception;
    }

    private void guarded(String variant, int n, Body body) {
        long t0 = System.nanoTime();
        progress.printf("herd %s, %d waiters ...%n", variant, n);
        try {
            body.run();
        } catch (Throwable e) {
            rows.add(new Row(variant, n, sessions(n), "FAILED", -1, -1, -1, e.toString()));
        }
        progress.printf("herd %s, %d waiters: %.1f s%n", variant, n, (System.nanoTime() - t0) / 1e9);
    }

    // ------------------------------------------------------------------ (a) ZkMutex

    private void mutex(int n) throws Exception {
        String dir = "/bench/herd/mutex-" + n;
        List<ZkLock> locks = new ArrayList<>();
        for (ZkClient c : pool) {
            locks.add(new ZkMutex(c, dir));
        }
        exclusiveLibrary("(a) ZkMutex", n, dir, locks::get, false);
    }

    // ------------------------------------------------------------------ (c) ZkReadWriteLock

    private void readWrite(int n) throws Exception {
        String dir = "/bench/herd/rw-" + n;
        List<ZkReadWriteLock> locks = new ArrayList<>();
        for (ZkClient c : pool) {
            locks.add(new ZkReadWriteLock(c, dir));
        }
        // Session 0: W0 (holding) and W1 (queued) take the write lock; readers queue behind W1.
        exclusiveLibrary("(c) ZkReadWriteLock", n, dir, i -> i == 0 ? locks.get(0).writeLock() : locks.get(i).readLock(),
                true);
    }

    /**
     * (a) and (c). (a): a holder on session 0, then N waiters. (c): W0 holding and W1 queued, both
     * on session 0, then N readers behind W1. Measures the holder's release, and for (a) the next.
     */
    private void exclusiveLibrary(String variant, int n, String dir, IntFunction<ZkLock> lockOfSession,
            boolean readWrite) throws Exception {
        BlockingQueue<HoldingThread> order = new LinkedBlockingQueue<>();
        List<HoldingThread> all = new ArrayList<>();
        int s = sessions(n);
        ZooKeeper look = pool.get(0).zooKeeper();
        long baseWatches = counters.snap().watchCount();
        try {
            HoldingThread holder;
            if (readWrite) {
                holder = started(new HoldingThread("holder", lockOfSession.apply(0), order::add), all);
                take(order, holder);
            } else {
                holder = firstEpisode(variant, n, dir, lockOfSession, order, all);
            }
            HoldingThread writer = null;
            long expectedWatches = n;
            int expectedNodes = n + 1;
            if (readWrite) {
                writer = started(new HoldingThread("W1", lockOfSession.apply(0), order::add), all);
                Await.until("W1 queued and watching W0", SETUP_LIMIT,
                        () -> children(look, dir) == 2 && counters.snap().watchCount() == baseWatches + 1);
                expectedWatches = 1 + s; // W1 watches W0; every reader watches W1: one watch per session
                expectedNodes = n + 2;
            }
            for (int j = 0; j < n; j++) {
                started(new HoldingThread("waiter-" + j, lockOfSession.apply(1 + j % s), order::add), all);
            }
            long watches = baseWatches + expectedWatches;
            int nodes = expectedNodes;
            settle(() -> children(look, dir) == nodes && counters.snap().watchCount() == watches,
                    SETUP_LIMIT, () -> variant + ": " + nodes + " nodes and " + watches + " watches; have "
                            + children(look, dir) + " and " + counters.snap().watchCount());
            touchSessions();
            ServerCounters.Snapshot s0 = counters.snap();
            holder.release();
            HoldingThread first = poll(order);
            ServerCounters.Snapshot s1 = counters.settled();
            if (readWrite) {
                if (first != writer) {
                    throw new IllegalStateException("after W0, " + first.getName() + " held, not W1");
                }
                rows.add(row(variant, n, "W0 release -> W1", s0, s1, -1, ""));
            } else {
                rows.add(row(variant, n, "holder -> 1st waiter", s0, s1, -1, ""));
                if (n >= 2) {
                    first.release();
                    poll(order);
                    ServerCounters.Snapshot s2 = counters.settled();
                    rows.add(row(variant, n, "1st -> 2nd waiter", s1, s2, -1, ""));
                }
            }
        } finally {
            for (HoldingThread t : all) {
                t.release();
            }
            for (HoldingThread t : all) {
                t.join(SETTLE_LIMIT.toMillis());
                if (t.isAlive()) {
                    throw new IllegalStateException(t.getName() + " still waiting after the queue was released");
                }
                if (t.failure() != null) {
                    throw new IllegalStateException(t.getName() + " failed", t.failure());
                }
            }
        }
        int left = children(look, dir);
        if (left != 0) {
            throw new IllegalStateException(left + " nodes left in " + dir);
        }
    }

    /**
     * (a): the first contention episode on the fresh directory, which leaves session 0 holding in
     * the steady state the table measures. Session 0 locks alone (it makes the directory, and
     * watches its children: a lone holder) and session 1 queues behind it, which tells session 0:
     * its release reads the queue, finds session 1, and deletes its node alone. Session 0 queues
     * again behind session 1, which was granted by the watch on a view of its node alone (stale:
     * session 0 queued since): its release reads the queue too. From then on both know the
     * directory contended and neither reads before a release there ({@code
     * io.zkcoord.internal.Contention}): session 0, granted by the watch, holds. What these first
     * handoffs cost is section {@code handoff} ({@link HandoffBench}): 1 write each.
     *
     * @return session 0's holding thread
     */
    private HoldingThread firstEpisode(String variant, int n, String dir, IntFunction<ZkLock> lockOfSession,
            BlockingQueue<HoldingThread> order, List<HoldingThread> all) throws Exception {
        ZooKeeper look = pool.get(0).zooKeeper();
        long baseWatches = counters.snap().watchCount();
        HoldingThread first = started(new HoldingThread("first holder", lockOfSession.apply(0), order::add), all);
        take(order, first);
        HoldingThread second = started(new HoldingThread("second holder", lockOfSession.apply(1), order::add), all);
        settle(() -> children(look, dir) == 2 && counters.snap().watchCount() == baseWatches + 1, SETUP_LIMIT,
                () -> variant + ": session 1 queued behind session 0");
        first.release();
        take(order, second);
        HoldingThread holder = started(new HoldingThread("holder", lockOfSession.apply(0), order::add), all);
        settle(() -> children(look, dir) == 2 && counters.snap().watchCount() == baseWatches + 1, SETUP_LIMIT,
                () -> variant + ": session 0 queued behind session 1");
        second.release();
        take(order, holder);
        return holder;
    }

    // ------------------------------------------------------------------ (b) naive

    /**
     * (b). The holder (session 0) creates its node and reads the children with a watch: held. The N
     * waiters then create their nodes, and only once all exist does each read the children with a
     * watch. That is the state a naive queue of N waiters is in (each waiter watching the
     * children), reached without the O(N^2) reads of arriving one by one.
     */
    private void naive(int n) throws Exception {
        ZooKeeper look = pool.get(0).zooKeeper();
        NaiveLock lock = new NaiveLock(rawDirectory(look, "naive-" + n));
        int s = sessions(n);
        NaiveLock.Waiter holder = lock.newWaiter(look);
        List<NaiveLock.Waiter> waiters = onWaiterSessions(n, lock::newWaiter);
        List<NaiveLock.Waiter> everyone = new ArrayList<>(waiters);
        everyone.add(holder);
        long baseWatches = counters.snap().watchCount();
        try {
            lock.queueAll(List.of(holder));
            take(lock.holders, holder);
            lock.queueAll(waiters);
            // Holder: 1 read; waiters: 1 each. One child watch per waiter session; the holder's
            // watch fired when the first waiter was created, and a holder does not read again.
            settle(() -> lock.reads.get() == n + 1 && counters.snap().watchCount() == baseWatches + s,
                    SETUP_LIMIT, () -> "(b): " + (n + 1) + " reads and " + (baseWatches + s) + " watches; have "
                            + lock.reads.get() + " and " + counters.snap().watchCount() + " " + lock.error.get());
            touchSessions();
            int reads0 = lock.reads.get();
            int callbacks0 = lock.callbacks.get();
            ServerCounters.Snapshot s0 = counters.snap();
            holder.release();
            RawRecipe.Node first = nextHolder(lock);
            settle(() -> lock.reads.get() == reads0 + n, SETTLE_LIMIT,
                    () -> "(b): every waiter reading again: " + (lock.reads.get() - reads0) + " of " + n);
            ServerCounters.Snapshot s1 = counters.settled();
            checkHeld(first, lock.error.get());
            int callbacks1 = lock.callbacks.get();
            rows.add(row("(b) naive: children watch", n, "holder -> 1st waiter", s0, s1, callbacks1 - callbacks0,
                    ""));
            if (n >= 2) {
                int reads1 = lock.reads.get();
                first.release();
                RawRecipe.Node second = nextHolder(lock);
                settle(() -> lock.reads.get() == reads1 + n - 1, SETTLE_LIMIT,
                        () -> "(b): every waiter reading again: " + (lock.reads.get() - reads1) + " of " + (n - 1));
                ServerCounters.Snapshot s2 = counters.settled();
                checkHeld(second, lock.error.get());
                rows.add(row("(b) naive: children watch", n, "1st -> 2nd waiter", s1, s2,
                        lock.callbacks.get() - callbacks1, "incl. the releaser's own leftover watch"));
            }
        } finally {
            lock.tearDown(everyone, look);
        }
    }

    // ------------------------------------------------------------------ (d) readers watch the first write

    private void firstWrite(int n) throws Exception {
        ZooKeeper look = pool.get(0).zooKeeper();
        FirstWriteRwLock lock = new FirstWriteRwLock(rawDirectory(look, "firstwrite-" + n));
        int s = sessions(n);
        FirstWriteRwLock.RwNode w0 = lock.newNode(look, true);
        FirstWriteRwLock.RwNode w1 = lock.newNode(look, true);
        List<FirstWriteRwLock.RwNode> readers = onWaiterSessions(n, zk -> lock.newNode(zk, false));
        List<FirstWriteRwLock.RwNode> everyone = new ArrayList<>(readers);
        everyone.add(w0);
        everyone.add(w1);
        long baseWatches = counters.snap().watchCount();
        try {
            lock.queueAll(List.of(w0));
            take(lock.holders, w0);
            lock.queueAll(List.of(w1));
            Await.until("(d): W1 watching W0", SETUP_LIMIT, () -> lock.settled.get() == 2);
            lock.queueAll(readers);
            // W0 is watched by W1 (session 0) and by every reader: one watch per session.
            settle(() -> lock.settled.get() == n + 2 && counters.snap().watchCount() == baseWatches + 1 + s,
                    SETUP_LIMIT, () -> "(d): " + (n + 2) + " settled and " + (baseWatches + 1 + s)
                            + " watches; have " + lock.settled.get() + " and " + counters.snap().watchCount()
                            + " " + lock.error.get());
            touchSessions();
            int settled0 = lock.settled.get();
            int callbacks0 = lock.callbacks.get();
            ServerCounters.Snapshot s0 = counters.snap();
            w0.release();
            RawRecipe.Node first = nextHolder(lock);
            settle(() -> lock.settled.get() == settled0 + n + 1, SETTLE_LIMIT,
                    () -> "(d): W1 held and every reader watching W1: " + (lock.settled.get() - settled0) + " of "
                            + (n + 1));
            ServerCounters.Snapshot s1 = counters.settled();
            if (first != w1) {
                throw new IllegalStateException("(d): W1 did not take the lock after W0; " + lock.error.get());
            }
            rows.add(row("(d) readers watch 1st write", n, "W0 release -> W1", s0, s1,
                    lock.callbacks.get() - callbacks0, ""));
        } finally {
            lock.tearDown(everyone, look);
        }
    }

    // ------------------------------------------------------------------ helpers

    private Row row(String variant, int n, String release, ServerCounters.Snapshot before,
            ServerCounters.Snapshot after, long callbacks, String note) {
        if (System.nanoTime() - touchedAt > QUIET_NANOS) {
            note = (note.isEmpty() ? "" : note + "; ") + "window over 9 s: may include pings";
        }
        return new Row(variant, n, sessions(n), release, ServerCounters.watchesFired(before, after), callbacks,
                counters.requests(before, after), note);
    }

    /** Waits for {@code condition}; fails naming {@code what} after {@code limit}. */
    private static void settle(BooleanSupplier condition, Duration limit, Supplier<String> what) {
        Await.until(limit, condition, what);
    }

    /** Makes {@code /bench/herd/<name>} through {@code zk} (a raw recipe does not make its directory); @return it */
    private static String rawDirectory(ZooKeeper zk, String name) throws KeeperException, InterruptedException {
        String dir = "/bench/herd/" + name;
        ThroughputBench.ensurePath(zk, dir);
        return dir;
    }

    /** One new {@code T} per waiter j of {@code n}, on waiter session 1 + j mod {@link #sessions}. */
    private <T> List<T> onWaiterSessions(int n, Function<ZooKeeper, T> make) {
        int s = sessions(n);
        List<T> made = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            made.add(make.apply(pool.get(1 + j % s).zooKeeper()));
        }
        return made;
    }

    private static int sessions(int n) {
        return Math.min(n, MAX_WAITER_SESSIONS);
    }

    /**
     * Sends one request on every session, so that none is due to ping during the next few seconds:
     * a client pings only after about 10 s without sending anything.
     */
    private void touchSessions() throws KeeperException, InterruptedException {
        for (ZkClient c : pool) {
            c.zooKeeper().exists("/", false);
        }
        touchedAt = System.nanoTime();
    }

    private static HoldingThread started(HoldingThread t, List<HoldingThread> all) {
        all.add(t);
        t.start();
        return t;
    }

    private static <T> void take(BlockingQueue<T> order, T expected) throws InterruptedException {
        T got = order.poll(SETTLE_LIMIT.toSeconds(), TimeUnit.SECONDS);
        if (got != expected) {
            throw new IllegalStateException("expected " + expected + " to hold first, got " + got);
        }
    }

    private static HoldingThread poll(BlockingQueue<HoldingThread> order) throws InterruptedException {
        HoldingThread t = order.poll(SETTLE_LIMIT.toSeconds(), TimeUnit.SECONDS);
        if (t == null) {
            throw new IllegalStateException("nobody took the lock within " + SETTLE_LIMIT.toSeconds() + " s");
        }
        return t;
    }

    /** @return the next node of {@code lock} to hold, or null if none does within {@link #SETTLE_LIMIT} */
    private static RawRecipe.Node nextHolder(RawRecipe lock) throws InterruptedException {
        return lock.holders.poll(SETTLE_LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static void checkHeld(Object holder, String error) {
        if (holder == null) {
            throw new IllegalStateException("nobody took the lock; " + error);
        }
    }

    private static int children(ZooKeeper zk, String dir) {
        return SessionPool.children(zk, dir).size();
    }

    private List<ZkClient> openPool(int size) throws Exception {
        return SessionPool.open(connect, size);
    }

    private void closePool() throws InterruptedException {
        SessionPool.close(pool);
    }

    /**
     * Prints whether the exclusive handoffs of the library, (a) and (c), met the targets: one
     * watch fired each, and at most 2 requests, at every queue length.
     */
    void printTargets(PrintStream to) {
        long minFired = Long.MAX_VALUE;
        long maxFired = 0;
        long maxRequests = 0;
        int measured = 0;
        int failed = 0;
        for (Row r : rows) {
            if (r.variant().startsWith("(a)") || r.variant().startsWith("(c)")) {
                if (r.fired() < 0) {
                    failed++;
                    continue;
                }
                measured++;
                minFired = Math.min(minFired, r.fired());
                maxFired = Math.max(maxFired, r.fired());
                maxRequests = Math.max(maxRequests, r.requests());
            }
        }
        to.printf("   herd, (a) and (c), %d releases at N = 1..1000: watches fired per handoff %d..%d (target 1), "
                + "requests per handoff at most %d (target <= 2)%s: %s%n", measured, minFired, maxFired, maxRequests,
                failed > 0 ? ", " + failed + " FAILED" : "",
                failed == 0 && minFired == 1 && maxFired == 1 && maxRequests <= 2 ? "met" : "NOT MET");
    }

    private void print() {
        out.println();
        out.println("5. Herd table: one release with N waiters queued behind the holder; server counters from mntr");
        out.println("   fired    = watch notifications the server sent (sum of zk_sum_node_{created,deleted,changed,"
                + "children}_watch_count)");
        out.println("   callbacks= watcher callbacks run in the client processes (raw variants only; the server sends one");
        out.println("              notification per session and watched path, the client runs every watcher behind it)");
        out.println("   requests = zk_packets_received delta minus the mntr calls themselves; every session sent a request");
        out.println("              just before, so no ping falls in the window. The closing reading is taken once the handoff");
        out.println("              is done and the counters stand still (the server counts a notification after sending it)");
        out.println("   sessions = waiter sessions: waiter j uses session 1 + j mod min(N,100); the holder (and W0, W1)");
        out.println("              use session 0. (a),(c): one thread per waiter; (b),(d): async callbacks per waiter");
        out.printf("   %-29s %5s %8s  %-21s %6s %9s %8s  %s%n", "variant", "N", "sessions", "release", "fired",
                "callbacks", "requests", "");
        int previous = -1;
        for (Row r : rows) {
            if (previous >= 0 && r.waiters() != previous) {
                out.println();
            }
            previous = r.waiters();
            out.printf("   %-29s %5d %8d  %-21s %6s %9s %8s  %s%n", r.variant(), r.waiters(), r.sessions(),
                    r.release(), r.fired() < 0 ? "-" : r.fired(), r.callbacks() < 0 ? "-" : r.callbacks(),
                    r.requests() < 0 ? "-" : r.requests(), r.note());
        }
    }
}
