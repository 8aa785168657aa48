package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.queue.QueueNode;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.SessionExpiry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * Section 7, the semaphore: what one release, and one holder's session expiry, cost the server with
 * N waiters queued behind the P holders of a {@link ZkSemaphore}, for N = 10, 100, 1000 and P = 1,
 * 5, 50; then uncontended {@code acquire()}+{@code release()} on one client.
 *
 * <p>Sessions (101 + 1 {@link ZkClient}s, 40 s sessions, opened once): session 0 holds the holder
 * that leaves (released, or its session expired on the server with {@link SessionExpiry}); session
 * 1 holds the other P - 1 holders and reads the queue for the benchmark; waiter j queues on session
 * {@code 2 + j mod min(N, 100)} with {@code acquireAsync()} (no thread per waiter), all N at once.
 * Neighbours in the queue never share a session, so the first waiter and its successor are told
 * in notifications of their own.
 *
 * <p>Meter: {@code mntr} for notifications sent and requests received (see {@link ServerCounters};
 * every session sends one request just before the window, so no ping falls in it), and the
 * four-letter {@code cons}, read just outside the window, for the requests each session sent: the
 * <em>others</em> column sums every session but the leaving holder's. For a release that is every
 * request but the delete; for an expiry it leaves out what the expiry itself costs (the second
 * handle's connect and {@code closeSession}, the expired handle's reconnection, the new session its
 * client opens; all inside the window, which closes once that new session is up).
 */
final class SemaphoreBench {

    static final int[] QUEUE_LENGTHS = {10, 100, 1000};
    static final int[] PERMITS = {1, 5, 50};
    static final int MAX_WAITER_SESSIONS = 100;
    private static final Duration SETUP_LIMIT = Duration.ofSeconds(120);
    private static final Duration SETTLE_LIMIT = Duration.ofSeconds(60);
    /** A ZooKeeper client pings after 10 s without sending; windows must stay shorter. */
    private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(9);
    private static final long WARMUP_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long UNCONTENDED_NANOS = TimeUnit.SECONDS.toNanos(4);
    private static final int REQUEST_COUNT_CYCLES = 200;
    private static final Pattern CONS_LINE = Pattern.compile("recved=(\\d+).*?sid=0x([0-9a-fA-F]+)");

    private final String connect;
    private final ServerCounters counters;
    private final FourLetterWords flw;
    private final PrintStream out;
    private final PrintStream progress;
    private final List<Row> rows = new ArrayList<>();
    private List<ZkClient> pool;
    private long touchedAt;
    private ExecutorService releaser;
    /** Uncontended, set by {@link #uncontended()}. */
    private double uncontendedRequests = Double.NaN;
    private double uncontendedPerSecond = Double.NaN;
    private final Samples uncontendedAcquire = new Samples();
    private final Samples uncontendedCycle = new Samples();
    /** Watches the server still held after a queue was drained, beyond those it held before. */
    private final List<String> leftovers = new ArrayList<>();

    SemaphoreBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.flw = FourLetterWords.of(connect);
        this.out = out;
        this.progress = progress;
    }

    /** One measured event. {@code others}: requests of every session but the leaving holder's. */
    private record Row(String event, int waiters, int permits, int sessions, long fired, long requests, long others,
            String note) {
    }

    void run() throws Exception {
        pool = openPool(2 + MAX_WAITER_SESSIONS);
        releaser = Executors.newFixedThreadPool(4);
        try {
            for (int n : QUEUE_LENGTHS) {
                for (int p : PERMITS) {
                    guarded("release", n, p, () -> measure(n, p, false));
                    guarded("expiry", n, p, () -> measure(n, p, true));
                }
            }
            progress.println("semaphore, uncontended ...");
            uncontended();
        } finally {
            releaser.shutdown();
            closePool();
        }
        print();
    }

    private interface Body {
        void run() throws Exception;
    }

    private void guarded(String event, int n, int p, Body body) {
        long t0 = System.nanoTime();
        progress.printf("semaphore %s, %d waiters, %d permits ...%n", event, n, p);
        try {
            body.run();
        } catch (Throwable e) {
            rows.add(new Row(event, n, p, sessions(n), -1, -1, -1, "FAILED: " + e));
        }
        progress.printf("semaphore %s, %d waiters, %d permits: %.1f s%n", event, n, p, (System.nanoTime() - t0) / 1e9);
    }

    // ------------------------------------------------------------------ one release, or one expiry

    private void measure(int n, int permits, boolean expire) throws Exception {
        String dir = "/bench/sem/" + (expire ? "expiry" : "release") + "-" + n + "-" + permits;
        int s = sessions(n);
        ZooKeeper look = pool.get(1).zooKeeper();
        ServerCounters.Snapshot base = counters.snap();
        long baseWatches = base.watchCount();
        long baseDataWatches = flw.wchsTotal();
        List<ZkSemaphore> semaphores = new ArrayList<>();
        for (ZkClient c : pool) {
            semaphores.add(new ZkSemaphore(c, dir, permits));
        }
        List<ZkLease> holders = new ArrayList<>();
        List<CompletableFuture<ZkLease>> waiters = new ArrayList<>();
        BlockingQueue<Integer> granted = new LinkedBlockingQueue<>();
        try {
            ZkLease leaving = semaphores.get(0).acquire();
            holders.add(leaving);
            for (int i = 1; i < permits; i++) {
                holders.add(semaphores.get(1).acquire());
            }
            for (int j = 0; j < n; j++) {
                int id = j;
                CompletableFuture<ZkLease> f = semaphores.get(2 + j % s).acquireAsync();
                f.whenComplete((lease, failure) -> granted.add(id));
                waiters.add(f);
            }
            // Every node queued; the first waiter watches the directory's children, every later
            // waiter its predecessor: n - 1 data watches and one child watch.
            long watches = baseWatches + n;
            long dataWatches = baseDataWatches + n - 1;
            Await.until(SETUP_LIMIT, () -> children(look, dir).size() == permits + n
                    && counters.snap().watchCount() == watches && flw.wchsTotal() == dataWatches,
                    () -> dir + ": " + (permits + n) + " nodes, " + watches + " watches (" + dataWatches + " data); have "
                            + children(look, dir).size() + ", " + counters.snap().watchCount() + " (" + flw.wchsTotal()
                            + ")");
            if (!granted.isEmpty()) {
                throw new IllegalStateException(granted.size() + " waiters got a lease while " + permits + " are held");
            }
            List<QueueNode> queue = QueueNode.queue(children(look, dir));
            String firstWaiter = dir + "/" + queue.get(permits).name();
            long leavingSession = pool.get(0).sessionId();
            Map<Long, Integer> survivors = new HashMap<>();
            for (int i = 1; i < pool.size(); i++) {
                survivors.put(pool.get(i).sessionId(), i);
            }

            touchSessions();
            Map<Long, Long> consBefore = receivedBySession();
            ServerCounters.Snapshot s0 = counters.settled();
            if (expire) {
                SessionExpiry.expireOnServer(pool.get(0).zooKeeper(), connect, SETTLE_LIMIT);
            } else {
                leaving.release();
            }
            Integer first = granted.poll(SETTLE_LIMIT.toSeconds(), TimeUnit.SECONDS);
            if (first == null) {
                throw new IllegalStateException("nobody got the freed permit within " + SETTLE_LIMIT.toSeconds() + " s");
            }
            if (expire) {
                // The window holds all of the expiry: the expired client learns of it on reconnecting
                // and opens a new session. (Until it has, it would still use the ended session.)
                Await.until(SETTLE_LIMIT, () -> pool.get(0).sessionId() != leavingSession,
                        "session 0 replaced after its expiry");
                pool.get(0).session();
            }
            ServerCounters.Snapshot s1 = counters.settled();
            Map<Long, Long> consAfter = receivedBySession();

            long others = 0;
            for (Map.Entry<Long, Long> e : consAfter.entrySet()) {
                Long was = consBefore.get(e.getKey());
                if (was != null && e.getKey() != leavingSession && survivors.containsKey(e.getKey())) {
                    others += e.getValue() - was;
                }
            }
            List<String> problems = new ArrayList<>();
            ZkLease lease = waiters.get(first).getNow(null);
            if (lease == null || !lease.nodePath().equals(firstWaiter)) {
                problems.add("granted " + (lease == null ? "nothing" : lease.nodePath()) + ", not the first waiter "
                        + firstWaiter);
            }
            if (!granted.isEmpty()) {
                problems.add((granted.size() + 1) + " waiters got a lease");
            }
            if (System.nanoTime() - touchedAt > QUIET_NANOS) {
                problems.add("window over 9 s: may include pings");
            }
            rows.add(new Row(expire ? "holder's session expired" : "release()", n, permits, s,
                    ServerCounters.watchesFired(s0, s1), counters.requests(s0, s1), others, String.join("; ", problems)));
        } finally {
            drain(dir, look, holders, waiters);
            try {
                Await.until(Duration.ofSeconds(5), () -> counters.snap().watchCount() == baseWatches, "");
            } catch (AssertionError e) {
                leftovers.add(dir + ": " + (counters.snap().watchCount() - baseWatches) + " watches left after the drain");
            }
        }
    }

    /** Releases every lease, each waiter's as soon as it is granted, and waits until the queue is empty. */
    private void drain(String dir, ZooKeeper look, List<ZkLease> holders, List<CompletableFuture<ZkLease>> waiters) {
        for (CompletableFuture<ZkLease> f : waiters) {
            f.thenAcceptAsync(ZkLease::release, releaser);
        }
        for (ZkLease h : holders) {
            releaser.execute(h::release);
        }
        Await.until(SETTLE_LIMIT, () -> children(look, dir).isEmpty() && waiters.stream().allMatch(CompletableFuture::isDone),
                () -> dir + " not drained: " + children(look, dir).size() + " nodes left");
        long failed = waiters.stream().filter(CompletableFuture::isCompletedExceptionally).count();
        if (failed > 0) {
            throw new IllegalStateException(failed + " acquisitions in " + dir + " failed");
        }
    }

    // ------------------------------------------------------------------ uncontended

    /** One client, one {@code ZkSemaphore} (5 permits), nobody else: acquire()+release() in a loop. */
    private void uncontended() throws Exception {
        ZkSemaphore sem = new ZkSemaphore(pool.get(1), "/bench/sem/uncontended", 5);
        sem.acquire().release(); // records the permit count, creates the directory
        long end = System.nanoTime() + WARMUP_NANOS;
        while (System.nanoTime() < end) {
            sem.acquire().release();
        }
        long cycles = 0;
        long t0 = System.nanoTime();
        end = t0 + UNCONTENDED_NANOS;
        long now = t0;
        while (now < end) {
            long c0 = System.nanoTime();
            ZkLease lease = sem.acquire();
            long acquired = System.nanoTime();
            lease.release();
            now = System.nanoTime();
            uncontendedAcquire.add(acquired - c0);
            uncontendedCycle.add(now - c0);
            cycles++;
        }
        uncontendedPerSecond = cycles / ((now - t0) / 1e9);
        ServerCounters.Snapshot before = counters.snap();
        for (int i = 0; i < REQUEST_COUNT_CYCLES; i++) {
            sem.acquire().release();
        }
        ServerCounters.Snapshot after = counters.snap();
        uncontendedRequests = (double) counters.requests(before, after) / REQUEST_COUNT_CYCLES;
    }

    // ------------------------------------------------------------------ helpers

    /** {@code cons}: packets received per session, summed over its connections (four-letter connections have none). */
    private Map<Long, Long> receivedBySession() {
        Map<Long, Long> bySession = new HashMap<>();
        for (String line : flw.send("cons").split("\n")) {
            Matcher m = CONS_LINE.matcher(line);
            if (m.find()) {
                bySession.merge(Long.parseUnsignedLong(m.group(2), 16), Long.parseLong(m.group(1)), Long::sum);
            }
        }
        return bySession;
    }

    private static int sessions(int n) {
        return Math.min(n, MAX_WAITER_SESSIONS);
    }

    /** One request on every session, so that none is due to ping during the next few seconds. */
    private void touchSessions() throws KeeperException, InterruptedException {
        for (ZkClient c : pool) {
            c.zooKeeper().exists("/", false);
        }
        touchedAt = System.nanoTime();
    }

    private static List<String> children(ZooKeeper zk, String dir) {
        return SessionPool.children(zk, dir);
    }

    private List<ZkClient> openPool(int size) throws Exception {
        return SessionPool.open(connect, size);
    }

    private void closePool() throws InterruptedException {
        SessionPool.close(pool);
    }

    /**
     * Prints whether the targets were met: at most 2 notifications per release or expiry, at most
     * 5 requests per release and at most 4 of the other sessions per expiry, at every N and P;
     * 3 requests per uncontended cycle.
     */
    void printTargets(PrintStream to) {
        long maxFired = 0;
        long maxReleaseRequests = 0;
        long maxOthers = 0;
        int measured = 0;
        int failed = 0;
        int wrong = 0;
        for (Row r : rows) {
            if (r.fired() < 0) {
                failed++;
                continue;
            }
            measured++;
            if (!r.note().isEmpty()) {
                wrong++;
            }
            maxFired = Math.max(maxFired, r.fired());
            maxOthers = Math.max(maxOthers, r.others());
            if (r.event().startsWith("release")) {
                maxReleaseRequests = Math.max(maxReleaseRequests, r.requests());
            }
        }
        boolean met = failed == 0 && wrong == 0 && maxFired <= 2 && maxReleaseRequests <= 5 && maxOthers <= 4
                && uncontendedRequests < 3.03;
        to.printf("   semaphore, %d events at N = 10..1000, P = 1..50: notifications at most %d (target <= 2), requests per"
                + " release at most %d (target <= 5), other sessions' requests at most %d (target <= 4); uncontended"
                + " %.2f requests per cycle (target 3)%s%s: %s%n", measured, maxFired, maxReleaseRequests, maxOthers,
                uncontendedRequests, failed > 0 ? ", " + failed + " FAILED" : "",
                wrong > 0 ? ", " + wrong + " with a note" : "", met ? "met" : "NOT MET");
    }

    private void print() {
        out.println();
        out.println("7. Semaphore: one release, and one holder's session expiry, with N waiters queued behind P holders");
        out.println("   fired    = watch notifications the server sent (mntr, as in section 5)");
        out.println("   requests = zk_packets_received delta minus the mntr calls; for an expiry this includes the expiry's own");
        out.println("              (second handle's connect and closeSession, the expired handle's reconnection, its new session)");
        out.println("   others   = requests of every session but the leaving holder's (cons, per connection): the waiters' and");
        out.println("              the other holders'. Expected: fired 2, requests 5 (delete; 1st waiter getChildren+setData;");
        out.println("              its successor getChildren, getChildren+watch), others 4, whatever N and P");
        out.println("   sessions = waiter sessions: waiter j uses session 2 + j mod min(N,100); the leaving holder session 0,");
        out.println("              the other P-1 holders session 1. All N waiters queue at once with acquireAsync()");
        out.printf("   %-25s %5s %7s %8s %6s %8s %6s  %s%n", "event", "N", "permits", "sessions", "fired", "requests",
                "others", "");
        int previous = -1;
        for (Row r : rows) {
            if (previous >= 0 && r.waiters() != previous) {
                out.println();
            }
            previous = r.waiters();
            out.printf("   %-25s %5d %7d %8d %6s %8s %6s  %s%n", r.event(), r.waiters(), r.permits(), r.sessions(),
                    r.fired() < 0 ? "-" : r.fired(), r.requests() < 0 ? "-" : r.requests(),
                    r.others() < 0 ? "-" : r.others(), r.note());
        }
        for (String l : leftovers) {
            out.println("   note: " + l);
        }
        out.println();
        out.printf("   uncontended acquire()+release(), one thread, one client, 5 permits, %d s after 1 s warm-up:%n",
                UNCONTENDED_NANOS / 1_000_000_000);
        out.printf("   %9s %10s %10s %10s %13s%n", "cycles/s", "acq p50", "acq p99", "cycle p50", "requests/cyc");
        out.printf("   %9.0f %7.2f ms %7.2f ms %7.2f ms %13.2f%n", uncontendedPerSecond,
                uncontendedAcquire.percentileMillis(50), uncontendedAcquire.percentileMillis(99),
                uncontendedCycle.percentileMillis(50), uncontendedRequests);
    }
}
