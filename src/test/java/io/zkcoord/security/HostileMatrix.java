package io.zkcoord.security;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.NotAuthorizedException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.observe.WaitOutcome;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hostile-client matrix: identity A holds and waits on every recipe in a directory whose ACL
 * gives A everything and B nothing; B tries, on each, to delete the holder's node, to put a node in
 * the queue (jumping ahead with a made-up low sequence number, or injecting a sequential one), to
 * rewrite data (the semaphore's permit record, the holder's node), to read the queue and the owner
 * data (raw, and through the Inspector), and to lock or acquire through the recipe itself. Every
 * cell must be refused with NOAUTH, at once; the recipes' own calls must throw {@link
 * NotAuthorizedException}; and A must see nothing: its holds stand, its waiters still wait (no
 * wake-up), its listeners hear nothing, no node is added or removed. Each cell's answer and time
 * are recorded for the report.
 *
 * <p>Not thread-safe; one run per test.
 */
final class HostileMatrix {

    private static final Logger LOG = LoggerFactory.getLogger(HostileMatrix.class);

    /**
     * A refusal must come this fast: "at once" with room for a busy 2-core machine (it takes milliseconds), and
     * half of the shortest wait B asks for (30 s): an attempt that waited instead of failing on NoAuth, for its
     * 30 s or for ever, fails the check.
     */
    static final Duration AT_ONCE = Duration.ofSeconds(15);
    /** How long a blocking acquisition by B is given before the test calls it a hang. */
    private static final Duration HANG = Duration.ofSeconds(60);

    /** One cell: what B tried on which recipe, what it got, and how long the answer took. */
    record Cell(String recipe, String attempt, String outcome, long millis) {
    }

    private final String root;
    private final ZkClient holderClient;
    private final ZkClient waiterClient;
    private final ZkClient b;
    private final List<Cell> cells = new ArrayList<>();
    private final List<String> aEvents = new CopyOnWriteArrayList<>();

    /**
     * @param root A's directory, whose ACL (and that of everything under it) gives A everything and B nothing
     * @param holderClient A's client that holds
     * @param waiterClient A's client that waits
     * @param b the hostile client
     */
    HostileMatrix(String root, ZkClient holderClient, ZkClient waiterClient, ZkClient b) {
        this.root = root;
        this.holderClient = holderClient;
        this.waiterClient = waiterClient;
        this.b = b;
    }

    /** Runs every row against every recipe; asserts as it goes. @return the measured cells */
    List<Cell> run() throws Exception {
        Recorder recorder = new Recorder();
        holderClient.addCoordinationListener(recorder);
        waiterClient.addCoordinationListener(recorder);

        List<Held> held = new ArrayList<>();
        held.add(lockPair("mutex", root + "/mutex", c -> new ZkMutex(c, root + "/mutex"),
                c -> new ZkMutex(c, root + "/mutex")));
        held.add(lockPair("read/write", root + "/rw", c -> new ZkReadWriteLock(c, root + "/rw").writeLock(),
                c -> new ZkReadWriteLock(c, root + "/rw").readLock()));
        held.add(lockPair("multi-lock", root + "/m1", c -> new ZkMultiLock(c, List.of(root + "/m1", root + "/m2")),
                c -> new ZkMultiLock(c, List.of(root + "/m2", root + "/m1"))));
        held.add(semaphore());
        held.add(election());

        Map<String, List<String>> before = queues(held);
        // Each recipe tells A's listeners of its hold (started, granted) and of its waiter (started) on a thread of
        // their own, so the last may still be on its way when the waiter's node is seen: wait for all three before
        // counting, or a slow delivery would pass for a reaction to B.
        Await.until("A's listeners heard of every hold and wait", Duration.ofSeconds(30),
                () -> aEvents.size() >= 3 * held.size());
        int eventsBefore = aEvents.size();

        for (Held h : held) {
            String holderNode = h.dir + "/" + before.get(h.dir).get(0);
            ZooKeeper zk = b.zooKeeper();
            refused(h.name, "delete the holder's node", () -> zk.delete(holderNode, -1));
            refused(h.name, "create a node ahead of the queue (jump)", () -> zk.create(h.dir + "/" + h.kind
                    + "-00000000000000000000000000000000-0000000000", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL));
            refused(h.name, "create a node in the queue (inject)", () -> zk.create(h.dir + "/" + h.kind
                    + "-ffffffffffffffffffffffffffffffff-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL_SEQUENTIAL));
            refused(h.name, "rewrite the holder's node data", () -> zk.setData(holderNode, "b".getBytes(UTF_8), -1));
            if (h.name.equals("semaphore")) {
                refused(h.name, "rewrite the semaphore's permit record",
                        () -> zk.setData(h.dir, "permits=100".getBytes(UTF_8), -1));
            }
            refused(h.name, "read the owner data (getData)", () -> zk.getData(holderNode, false, null));
            refused(h.name, "list the queue (getChildren)", () -> zk.getChildren(h.dir, false));
            refusedByLibrary(h.name, "Inspector.inspect", () -> Inspector.inspect(b, h.dir));
            for (Map.Entry<String, ThrowingRunnable> take : h.bTakes.entrySet()) {
                refusedByLibrary(h.name, take.getKey(), take.getValue());
            }
        }
        refusedByLibrary("mutex", "lock a new path under A's directory (tryLock 30 s)",
                () -> new ZkMutex(b, root + "/new-by-b").tryLock(30, TimeUnit.SECONDS));

        // A saw nothing of it.
        assertEquals(before, queues(held), "no node added or removed by B");
        assertEquals(eventsBefore, aEvents.size(), "A's listeners heard nothing during B's attempts: " + aEvents);
        for (Held h : held) {
            h.assertUndisturbed.run();
        }
        // And A's recipes still work: each holder lets go, each waiter takes over.
        for (Held h : held) {
            h.handOver.run();
        }
        for (Held h : held) {
            h.close.run();
        }
        SecretsInLogs.assertClean("B's client", b.toString());
        SecretsInLogs.assertClean("A's client", holderClient.toString());
        log();
        return cells;
    }

    // ------------------------------------------------------------------ recipes held by A

    /** A recipe A holds and waits on, and what B tries through the library. */
    private static final class Held {
        String name;
        String dir;
        String kind;
        Map<String, ThrowingRunnable> bTakes = new TreeMap<>();
        Runnable assertUndisturbed;
        Runnable handOver;
        Runnable close = () -> { };
    }

    interface LockMaker {
        ZkLock make(ZkClient client);
    }

    private Held lockPair(String name, String dir, LockMaker holderSide, LockMaker waiterSide) throws Exception {
        ZkLock holderLock = holderSide.make(holderClient);
        ZkLease hold = holderLock.acquire();
        CompletableFuture<ZkLease> waiting = waiterSide.make(waiterClient).acquireAsync();
        awaitQueue(dir, 2);
        Held h = new Held();
        h.name = name;
        h.dir = dir;
        h.kind = kind(dir);
        h.bTakes.put("tryLock(30 s)", () -> holderSide.make(b).tryLock(30, TimeUnit.SECONDS));
        h.bTakes.put("lock()", () -> bounded(() -> holderSide.make(b).lock()));
        h.bTakes.put("acquire()", () -> bounded(() -> holderSide.make(b).acquire()));
        h.bTakes.put("acquireAsync()", () -> holderSide.make(b).acquireAsync().get(HANG.toSeconds(), TimeUnit.SECONDS));
        h.assertUndisturbed = () -> {
            assertTrue(hold.isValid(), name + ": A's hold stands");
            assertFalse(hold.whenLost().isDone(), name + ": A's hold was not lost");
            assertFalse(waiting.isDone(), name + ": A's waiter still waits (no wake-up, no failure)");
        };
        h.handOver = () -> {
            hold.release();
            try (ZkLease next = waiting.get(30, TimeUnit.SECONDS)) {
                assertTrue(next.isValid(), name + ": A's waiter takes over");
            } catch (Exception e) {
                throw new AssertionError(name + ": A's waiter did not take over", e);
            }
        };
        return h;
    }

    private Held semaphore() throws Exception {
        String dir = root + "/sem";
        ZkLease hold = new ZkSemaphore(holderClient, dir, 1).acquire();
        CompletableFuture<ZkLease> waiting = new ZkSemaphore(waiterClient, dir, 1).acquireAsync();
        awaitQueue(dir, 2);
        Held h = new Held();
        h.name = "semaphore";
        h.dir = dir;
        h.kind = "sem";
        h.bTakes.put("tryAcquire(30 s)", () -> new ZkSemaphore(b, dir, 1).tryAcquire(Duration.ofSeconds(30)));
        h.bTakes.put("acquire()", () -> bounded(() -> new ZkSemaphore(b, dir, 1).acquire()));
        h.bTakes.put("acquireAsync()", () -> new ZkSemaphore(b, dir, 1).acquireAsync().get(HANG.toSeconds(),
                TimeUnit.SECONDS));
        h.assertUndisturbed = () -> {
            assertTrue(hold.isValid(), "semaphore: A's lease stands");
            assertFalse(waiting.isDone(), "semaphore: A's waiter still waits");
        };
        h.handOver = () -> {
            hold.release();
            try (ZkLease next = waiting.get(30, TimeUnit.SECONDS)) {
                assertTrue(next.isValid(), "semaphore: A's waiter takes over");
            } catch (Exception e) {
                throw new AssertionError("semaphore: A's waiter did not take over", e);
            }
        };
        return h;
    }

    private Held election() throws Exception {
        String dir = root + "/election";
        List<String> told = new CopyOnWriteArrayList<>();
        ZkLeaderElection leader = new ZkLeaderElection(holderClient, dir, "a-leader");
        ZkLeaderElection follower = new ZkLeaderElection(waiterClient, dir, "a-follower");
        leader.addListener(recording("leader", told));
        follower.addListener(recording("follower", told));
        leader.start();
        assertTrue(leader.awaitLeadership(Duration.ofSeconds(30)), "A leads");
        follower.start();
        awaitQueue(dir, 2);
        Await.until("the leader was told", Duration.ofSeconds(10), () -> told.size() == 1);
        Held h = new Held();
        h.name = "election";
        h.dir = dir;
        h.kind = "leader";
        h.bTakes.put("start() + awaitLeadership(30 s)", () -> {
            try (ZkLeaderElection bElection = new ZkLeaderElection(b, dir, "b")) {
                bElection.start();
                bElection.awaitLeadership(Duration.ofSeconds(30));
            }
        });
        h.assertUndisturbed = () -> {
            assertTrue(leader.isLeader(), "election: A still leads");
            assertFalse(follower.isLeader(), "election: A's follower still follows");
            assertEquals(List.of("leader elected"), told, "election: A's listeners heard only the first election");
        };
        h.handOver = () -> {
            leader.close();
            try {
                assertTrue(follower.awaitLeadership(Duration.ofSeconds(30)), "election: A's follower takes over");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        h.close = follower::close;
        return h;
    }

    private static LeadershipListener recording(String who, List<String> told) {
        return new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                told.add(who + " elected");
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                told.add(who + " revoked " + reason);
            }
        };
    }

    // ------------------------------------------------------------------ cells

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    interface Blocking {
        void run() throws Exception;
    }

    /** Runs a blocking call on another thread; a call still blocked after {@link #HANG} is a hang. */
    private static void bounded(Blocking call) throws Exception {
        CompletableFuture<Void> f = CompletableFuture.runAsync(() -> {
            try {
                call.run();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        try {
            f.get(HANG.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
                cause = cause.getCause();
            }
            if (cause instanceof Exception ex) {
                throw ex;
            }
            throw e;
        } catch (TimeoutException e) {
            throw new AssertionError("still blocked after " + HANG.toSeconds() + " s: a hang");
        }
    }

    /** A raw call by B must fail with NoAuth, at once. */
    private void refused(String recipe, String attempt, ThrowingRunnable call) {
        long start = System.nanoTime();
        Throwable got = null;
        try {
            call.run();
        } catch (Throwable t) {
            got = t;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String outcome = got == null ? "SUCCEEDED" : got instanceof KeeperException ke ? ke.code().name() : got.toString();
        cells.add(new Cell(recipe, attempt, outcome, millis));
        assertInstanceOf(KeeperException.NoAuthException.class, got, recipe + ": B's '" + attempt + "' must be NoAuth");
        assertTrue(millis < AT_ONCE.toMillis(), recipe + ": " + attempt + " took " + millis + " ms");
    }

    /** A library call by B must throw NotAuthorizedException naming the ACL problem, at once. */
    private void refusedByLibrary(String recipe, String attempt, ThrowingRunnable call) {
        long start = System.nanoTime();
        Throwable got = null;
        try {
            call.run();
        } catch (Throwable t) {
            got = t;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        while (got instanceof ExecutionException && got.getCause() != null) {
            got = got.getCause();
        }
        String outcome = got == null ? "RETURNED" : got.getClass().getSimpleName() + ": " + got.getMessage();
        cells.add(new Cell(recipe, attempt, outcome, millis));
        SecretsInLogs.assertClean(recipe + ": the answer to " + attempt, outcome);
        if (!(got instanceof NotAuthorizedException refused)) {
            fail(recipe + ": B's " + attempt + " must throw NotAuthorizedException, got " + outcome, got);
            return;
        }
        assertTrue(refused.getMessage().contains("not authorized") && refused.getMessage().contains("NOAUTH"),
                refused.getMessage());
        assertTrue(millis < AT_ONCE.toMillis(), recipe + ": " + attempt + " took " + millis + " ms");
    }

    // ------------------------------------------------------------------ helpers

    private static String kind(String dir) {
        return dir.endsWith("/rw") ? "write" : dir.contains("/m") ? "multi" : "lock";
    }

    /** The queue of every directory, read as A. */
    private Map<String, List<String>> queues(List<Held> held) throws Exception {
        Map<String, List<String>> all = new TreeMap<>();
        for (Held h : held) {
            List<String> children = new ArrayList<>(holderClient.zooKeeper().getChildren(h.dir, false));
            children.sort(java.util.Comparator.comparing(n -> n.substring(n.lastIndexOf('-'))));
            all.put(h.dir, children);
        }
        List<String> m2 = new ArrayList<>(holderClient.zooKeeper().getChildren(root + "/m2", false));
        java.util.Collections.sort(m2);
        all.put(root + "/m2", m2);
        all.put(root, sorted(holderClient.zooKeeper().getChildren(root, false)));
        return all;
    }

    private static List<String> sorted(List<String> l) {
        List<String> copy = new ArrayList<>(l);
        java.util.Collections.sort(copy);
        return copy;
    }

    private void awaitQueue(String dir, int n) {
        Await.until(dir + " holds " + n + " nodes", Duration.ofSeconds(30), () -> {
            try {
                return holderClient.zooKeeper().getChildren(dir, false).size() == n;
            } catch (Exception e) {
                return false;
            }
        });
    }

    private void log() {
        StringBuilder table = new StringBuilder("\n| recipe | what B tried | what B got | ms |\n|---|---|---|---|\n");
        for (Cell c : cells) {
            table.append("| ").append(c.recipe).append(" | ").append(c.attempt).append(" | ")
                    .append(c.outcome.replace("|", "/")).append(" | ").append(c.millis).append(" |\n");
        }
        LOG.info("MEASURED hostile-client matrix under {}:{}", root, table);
    }

    /** Records every event A's clients report (they must report none during B's attempts). */
    private final class Recorder implements CoordinationListener {
        @Override
        public void acquisitionStarted(CoordinationEvent event) {
            aEvents.add("started " + event);
        }

        @Override
        public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
            aEvents.add("granted " + event);
        }

        @Override
        public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
            aEvents.add("ended " + event + " " + outcome);
        }

        @Override
        public void released(CoordinationEvent event, Duration held, long fencingToken) {
            aEvents.add("released " + event);
        }

        @Override
        public void lost(CoordinationEvent event, Duration held, long fencingToken) {
            aEvents.add("lost " + event);
        }

        @Override
        public void sessionStateChanged(io.zkcoord.ConnectionState state) {
            aEvents.add("session " + state);
        }
    }
}
