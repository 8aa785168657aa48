package io.zkcoord.examples.snippets;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.shard.ShardListener;
import io.zkcoord.shard.ZkShardMember;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Runs docs/choosing.md's examples ({@link Choosing}) against a real ensemble, each as the document
 * describes it: two processes (two clients) at once, and a holder whose session the ensemble ends,
 * as it ends the session of a crashed or cut-off process.
 */
final class ChoosingChecks {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private final String connect;
    private final BiConsumer<String, BooleanSupplier> check;

    private ChoosingChecks(String connect, BiConsumer<String, BooleanSupplier> check) {
        this.connect = connect;
        this.check = check;
    }

    /**
     * @param connect the ensemble
     * @param check records a named condition (a failure is reported, the run goes on)
     */
    static void all(String connect, BiConsumer<String, BooleanSupplier> check) throws Exception {
        ChoosingChecks run = new ChoosingChecks(connect, check);
        ExecutorService threads = Executors.newCachedThreadPool();
        try (ZkClient a = client(connect); ZkClient b = client(connect)) {
            run.runOnce(a, b, threads);
            run.perKey(a, b, threads);
            run.semaphore(a, b, threads);
            run.election(a, b);
            run.shards(a, b);
            run.fencing(a, b);
            run.sharedValue(a, b, threads);
        } finally {
            threads.shutdownNow();
        }
    }

    private void runOnce(ZkClient a, ZkClient b, ExecutorService threads) throws Exception {
        LocalDate day = LocalDate.of(2026, 11, 29);
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Future<Boolean> first = threads.submit(() -> Choosing.nightlyExport(a, day, token -> {
            runs.incrementAndGet();
            inside.countDown();
            await(finish);
        }));
        check.accept("run once: the first instance starts the export", () -> await(inside));
        boolean secondWhileRunning = Choosing.nightlyExport(b, day, token -> runs.incrementAndGet());
        finish.countDown();
        boolean firstRan = first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        boolean secondAfter = Choosing.nightlyExport(b, day, token -> runs.incrementAndGet());
        check.accept("run once: a second instance skips while the first runs, and after it ran that day",
                () -> firstRan && !secondWhileRunning && !secondAfter && runs.get() == 1);

        LocalDate crashDay = day.plusDays(1);
        boolean crashed;
        try {
            Choosing.nightlyExport(a, crashDay, token -> {
                throw new IllegalStateException("the export died half-way");
            });
            crashed = false;
        } catch (IllegalStateException e) {
            crashed = true;
        }
        boolean rerun = Choosing.nightlyExport(b, crashDay, token -> runs.incrementAndGet());
        boolean died = crashed;
        check.accept("run once: a run that died before recording the day is run again by the next instance",
                () -> died && rerun && runs.get() == 2);
        check.accept("run once: the lock leaves no node", () -> children(a, "/locks/nightly-export").isEmpty());
    }

    private void perKey(ZkClient a, ZkClient b, ExecutorService threads) throws Exception {
        String number = "+1 555 0199";
        Set<String> table = ConcurrentHashMap.newKeySet();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Future<String> first = threads.submit(() -> Choosing.register(a, number, token -> {
            inside.countDown();
            await(finish);
            return table.add(number) ? "201 registered" : "409 already registered";
        }));
        check.accept("duplicate request: the first request holds its number", () -> await(inside));
        String duplicate = Choosing.register(b, number, token -> table.add(number) ? "201 registered" : "409 already registered");
        String other = Choosing.register(b, "+1 555 0142", token -> table.add("+1 555 0142") ? "201 registered" : "409");
        finish.countDown();
        String firstAnswer = first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        String repeat = Choosing.register(b, number, token -> table.add(number) ? "201 registered" : "409 already registered");
        check.accept("duplicate request: refused at once while the first holds, another number goes through",
                () -> duplicate.equals("409 a request for +1 555 0199 is in progress") && other.equals("201 registered")
                        && firstAnswer.equals("201 registered"));
        check.accept("duplicate request: a later repeat gets the lock and meets the unique key",
                () -> repeat.equals("409 already registered") && table.size() == 2);
        check.accept("duplicate request: the keys' locks leave no node",
                () -> children(a, "/locks/registrations").isEmpty());
    }

    private void semaphore(ZkClient a, ZkClient b, ExecutorService threads) throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Future<Optional<Integer>>> jobs = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ZkClient client = i % 2 == 0 ? a : b;
            jobs.add(threads.submit(() -> Choosing.convertVideo(client, DEADLINE, () -> {
                int now = inside.incrementAndGet();
                most.accumulateAndGet(now, Math::max);
                waitFor(() -> most.get() >= 3);   // stay until 3 were inside at once
                inside.decrementAndGet();
                return now;
            })));
        }
        int done = 0;
        for (Future<Optional<Integer>> job : jobs) {
            if (job.get(2 * DEADLINE.toSeconds(), TimeUnit.SECONDS).isPresent()) {
                done++;
            }
        }
        int ran = done;
        check.accept("limit concurrency: 6 conversions on 2 clients ran 3 at a time, never 4",
                () -> ran == 6 && most.get() == 3);
        Optional<ZkLease> p1 = new io.zkcoord.semaphore.ZkSemaphore(a, "/semaphores/video-converters", 3)
                .tryAcquire(DEADLINE);
        Optional<ZkLease> p2 = new io.zkcoord.semaphore.ZkSemaphore(a, "/semaphores/video-converters", 3)
                .tryAcquire(DEADLINE);
        Optional<ZkLease> p3 = new io.zkcoord.semaphore.ZkSemaphore(b, "/semaphores/video-converters", 3)
                .tryAcquire(DEADLINE);
        try {
            Optional<Integer> fourth = Choosing.convertVideo(b, Duration.ofMillis(300), () -> 4);
            check.accept("limit concurrency: with 3 permits taken, a 4th gets nothing within its wait",
                    () -> p1.isPresent() && p2.isPresent() && p3.isPresent() && fourth.isEmpty());
        } finally {
            p1.ifPresent(ZkLease::release);
            p2.ifPresent(ZkLease::release);
            p3.ifPresent(ZkLease::release);
        }
    }

    private void election(ZkClient a, ZkClient b) throws Exception {
        AtomicLong epochA = new AtomicLong();
        AtomicLong epochB = new AtomicLong();
        AtomicInteger stopsA = new AtomicInteger();
        try (ZkLeaderElection first = Choosing.billingScheduler(a, "billing-1", duty(epochA, stopsA));
                ZkLeaderElection second = Choosing.billingScheduler(b, "billing-2", duty(epochB, new AtomicInteger()))) {
            check.accept("one active instance: the first instance leads, the second does not",
                    () -> waitFor(() -> first.isLeader() && epochA.get() > 0) && !second.isLeader());
            long before = epochA.get();
            endSessionOnServer(a);   // what the ensemble does to a crashed leader, after its session timeout
            check.accept("one active instance: when the leader's session ends, the other leads with a higher epoch, the old one stopped",
                    () -> waitFor(() -> second.isLeader() && epochB.get() > before && stopsA.get() >= 1));
        }
        check.accept("one active instance: closing both leaves no node",
                () -> waitFor(() -> children(a, "/election/billing-scheduler").isEmpty()));
    }

    private static Choosing.Duty duty(AtomicLong epoch, AtomicInteger stops) {
        return new Choosing.Duty() {
            @Override
            public void start(long e) {
                epoch.set(e);
            }

            @Override
            public void stop() {
                stops.incrementAndGet();
            }
        };
    }

    private void shards(ZkClient a, ZkClient b) throws Exception {
        Set<Integer> ownedA = ConcurrentHashMap.newKeySet();
        Set<Integer> ownedB = ConcurrentHashMap.newKeySet();
        try (ZkShardMember one = Choosing.payoutWorker(a, "payouts-1", tracking(ownedA))) {
            try (ZkShardMember two = Choosing.payoutWorker(b, "payouts-2", tracking(ownedB))) {
                check.accept("split work: two workers own 4 of the 8 shards each, none twice",
                        () -> waitFor(() -> one.owned().size() == 4 && two.owned().size() == 4
                                && union(one.owned(), two.owned()).size() == 8));
                check.accept("split work: each worker's listener heard exactly its shards",
                        () -> waitFor(() -> ownedA.equals(one.owned()) && ownedB.equals(two.owned())));
            }
            check.accept("split work: when a worker leaves, the other owns all 8",
                    () -> waitFor(() -> one.owned().size() == 8 && ownedA.size() == 8 && ownedB.isEmpty()));
        }
        check.accept("split work: an account's shard is the same everywhere, in 0..7",
                () -> Choosing.shardOf("acct-17") == Choosing.shardOf(new String("acct-17"))
                        && Choosing.shardOf("acct-17") >= 0 && Choosing.shardOf("acct-17") < 8);
    }

    private static ShardListener tracking(Set<Integer> owned) {
        return new ShardListener() {
            @Override
            public void assigned(int shard, long fencingToken) {
                owned.add(shard);
            }

            @Override
            public void revoked(int shard, long fencingToken, RevokeReason reason) {
                owned.remove(shard);
            }
        };
    }

    private void fencing(ZkClient a, ZkClient b) throws Exception {
        create(a, "/config", "");
        create(a, "/config/prices", "v1");
        try (Connection db = DriverManager.getConnection("jdbc:h2:mem:choosing");
                Statement ddl = db.createStatement()) {
            ddl.execute("CREATE TABLE reports (id VARCHAR(64) PRIMARY KEY, body VARCHAR(256),"
                    + " fencing_token BIGINT NOT NULL)");
            ddl.execute("INSERT INTO reports VALUES ('daily', '', 0)");

            ZkMutex lockA = new ZkMutex(a, "/locks/reports/daily");
            ZkLease stale = lockA.acquire();
            long oldToken = stale.fencingToken();
            check.accept("fencing: the first holder writes with its token",
                    () -> sql(() -> Choosing.saveReport(db, "daily", "from A", oldToken)));
            endSessionOnServer(a);   // A is cut off, or paused, past its session timeout
            check.accept("fencing: the holder hears that its lease was lost",
                    () -> waitFor(() -> stale.whenLost().isDone() && !stale.isValid()));
            try (ZkLease fresh = new ZkMutex(b, "/locks/reports/daily").acquire()) {
                long newToken = fresh.fencingToken();
                check.accept("fencing: the next holder's token is higher, and its write lands",
                        () -> newToken > oldToken && sql(() -> Choosing.saveReport(db, "daily", "from B", newToken)));
                check.accept("fencing: the old holder's late write is refused, the new one's stays",
                        () -> !sql(() -> Choosing.saveReport(db, "daily", "late A", oldToken))
                                && "from B".equals(body(db)));
                check.accept("fencing: the old holder's guarded commit is refused and writes nothing",
                        () -> !Choosing.publishPrices(stale, bytes("stale"))
                                && read(a, "/config/prices").equals("v1"));
                check.accept("fencing: the holder's guarded commit lands",
                        () -> Choosing.publishPrices(fresh, bytes("v2")) && read(a, "/config/prices").equals("v2"));
            }
        }
    }

    private void sharedValue(ZkClient a, ZkClient b, ExecutorService threads) throws Exception {
        AtomicLong heardA = new AtomicLong();
        AtomicLong heardB = new AtomicLong();
        try (io.zkcoord.value.ZkSharedValue<Long> limitA = Choosing.rateLimit(a, heardA::set);
                io.zkcoord.value.ZkSharedValue<Long> limitB = Choosing.rateLimit(b, heardB::set)) {
            check.accept("share a value: both instances start with the seed, told by their listeners",
                    () -> waitFor(() -> heardA.get() == 100 && heardB.get() == 100));
            io.zkcoord.value.Versioned<Long> staleB = limitB.get();
            boolean raised = Choosing.raise(limitA, 10);
            check.accept("share a value: one instance raises it, the other's listener hears the new value",
                    () -> raised && waitFor(() -> heardB.get() == 110 && limitB.get().value() == 110));
            boolean lateWrite = limitB.trySet(staleB, 999L);
            check.accept("share a value: a write based on a value read before that change is refused",
                    () -> !lateWrite && limitB.get().value() == 110 && waitFor(() -> heardA.get() == 110));
        }
        List<Future<Long>> numbers = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            ZkClient client = i % 2 == 0 ? a : b;
            numbers.add(threads.submit(() -> Choosing.nextInvoiceNumber(client)));
        }
        Set<Long> distinct = new HashSet<>();
        for (Future<Long> n : numbers) {
            distinct.add(n.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        }
        long last = new io.zkcoord.value.ZkAtomicLong(a, "/counters/invoice-number").get();
        check.accept("share a value: 40 increments from 2 clients gave 40 distinct numbers, and the counter is 40",
                () -> distinct.size() == 40 && last == 40 && distinct.contains(1L) && distinct.contains(40L));
    }

    // --- helpers -------------------------------------------------------------------------------------

    private static ZkClient client(String connect) {
        return ZkClient.builder()
                .connectString(connect)
                .sessionTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100)))
                .build();
    }

    /**
     * Ends the client's current session on the server, as the ensemble ends the session of a crashed
     * or cut-off process: a second handle with the same id and password connects and is closed,
     * until the server answers that the session has expired.
     */
    private void endSessionOnServer(ZkClient client) throws Exception {
        ZooKeeper zk = client.zooKeeper();
        long id = zk.getSessionId();
        byte[] password = zk.getSessionPasswd();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
            ZooKeeper twin = new ZooKeeper(connect, 10_000, e -> {
                if (e.getType() == EventType.None) {
                    states.add(e.getState());
                }
            }, id, password);
            try {
                KeeperState s;
                do {
                    s = states.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } while (s != null && s != KeeperState.SyncConnected && s != KeeperState.Expired);
                if (s == KeeperState.Expired) {
                    return;
                }
            } finally {
                twin.close();   // closing the twin that holds the session closes the session
            }
        }
        throw new IllegalStateException("session 0x" + Long.toHexString(id) + " still alive after " + DEADLINE);
    }

    private static Set<Integer> union(Set<Integer> x, Set<Integer> y) {
        Set<Integer> all = new HashSet<>(x);
        all.addAll(y);
        return x.size() + y.size() == all.size() ? all : Set.of();
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return whether {@code condition} came true before the deadline */
    private static boolean waitFor(BooleanSupplier condition) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private interface SqlCheck {
        boolean get() throws java.sql.SQLException;
    }

    private static boolean sql(SqlCheck c) {
        try {
            return c.get();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String body(Connection db) {
        try (Statement s = db.createStatement(); ResultSet r = s.executeQuery("SELECT body FROM reports WHERE id = 'daily'")) {
            return r.next() ? r.getString(1) : null;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> children(ZkClient client, String path) {
        try {
            return client.call(path, zk -> zk.getChildren(path, false));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException | InterruptedException e) {
            throw new IllegalStateException("cannot read " + path + ": " + e, e);
        }
    }

    private static String read(ZkClient client, String path) {
        try {
            return new String(client.call(path, zk -> zk.getData(path, false, null)), StandardCharsets.UTF_8);
        } catch (KeeperException | InterruptedException e) {
            throw new IllegalStateException("cannot read " + path + ": " + e, e);
        }
    }

    private static void create(ZkClient client, String path, String data) throws Exception {
        try {
            client.call(path, zk -> zk.create(path, bytes(data), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        } catch (KeeperException.NodeExistsException e) {
            // from an earlier run on the same ensemble
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
