package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.LockLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.ZkProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ZkMultiLock} against a real server: one transaction of nodes, held when first everywhere,
 * exclusive with the single locks of each path, one token, one deadline, nothing left behind.
 */
@Timeout(120)
class ZkMultiLockTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private ZkTestEnsemble ensemble;
    private ZkClient client;
    private ZkClient other;
    private ZkClient observer;

    /** Every test has a server of its own ({@code @ZkEnsemble} on the method): the paths are the same in each. */
    @BeforeEach
    void start(ZkTestEnsemble ensemble, ZkClient client, ZkClient other, ZkClient observer) {
        this.ensemble = ensemble;
        this.client = client;
        this.other = other;
        this.observer = observer;
    }

    @Test
    @ZkEnsemble
    void badArgumentsAreRefusedEarly() {
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(null, List.of("/a")));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, null));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, List.of()));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, List.of("/a", "/b", "/a")));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, List.of("/a", "relative")));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, List.of("/a", "/b/")));
        assertThrows(IllegalArgumentException.class, () -> new ZkMultiLock(client, Arrays.asList("/a", null)));
        ZkMultiLock lock = new ZkMultiLock(client, List.of("/m/b", "/m/a"));
        assertEquals("/m/b", lock.path());
        assertEquals(List.of("/m/b", "/m/a"), lock.paths());
    }

    /**
     * Uncontended: one node of kind multi in every directory, all of one transaction (one czxid,
     * the token), data naming every path; 3 requests per cycle whatever the number of paths.
     */
    @Test
    @ZkEnsemble
    void uncontendedCycleIsOneTransactionAndThreeRequests() throws Exception {
        FourLetterWords flw = FourLetterWords.of(ensemble.connectString());
        for (int n : new int[] {1, 2, 6}) {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                paths.add("/cycle" + n + "/p" + i);
            }
            ZkMultiLock lock = new ZkMultiLock(client, paths);
            lock.lock(); // first time: creates the directories
            long token = lock.fencingToken();
            for (String p : paths) {
                List<String> nodes = children(p);
                assertEquals(1, nodes.size(), p);
                assertTrue(nodes.get(0).startsWith("multi-"), nodes.get(0));
                Stat stat = new Stat();
                byte[] data = observer.zooKeeper().getData(p + "/" + nodes.get(0), false, stat);
                assertEquals(token, stat.getCzxid(), "every node has the token as czxid");
                String text = new String(data, StandardCharsets.UTF_8);
                assertTrue(text.contains("pid=") && (n == 1 || text.contains("paths=" + String.join(",", paths))), text);
            }
            lock.unlock();
            for (String p : paths) {
                assertEquals(List.of(), children(p));
            }
            // A ping of an idle session may slip between two mntr calls: take the least of a few tries.
            long fewest = Long.MAX_VALUE;
            for (int attempt = 0; attempt < 5; attempt++) {
                long before = flw.packetsReceived();
                lock.lock();
                lock.unlock();
                long after = flw.packetsReceived();
                fewest = Math.min(fewest, after - before - 1); // the second mntr counts itself
            }
            System.out.println("MEASURED multi-lock requests per uncontended cycle, " + n + " paths: " + fewest);
            assertEquals(3, fewest, "requests per uncontended cycle with " + n + " paths");
        }
    }

    /** Exclusive with a mutex, a write lock and a read lock on any one of its paths, both ways. */
    @Test
    @ZkEnsemble
    void exclusiveWithTheSingleLocksOfEachPath() throws Exception {
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/ex/a", "/ex/b"));
        ZkMutex mutexB = new ZkMutex(other, "/ex/b");
        ZkReadWriteLock rwA = new ZkReadWriteLock(other, "/ex/a");
        for (ZkLock single : List.of(mutexB, rwA.writeLock(), rwA.readLock())) {
            ZkLease blocker = single.acquire();
            assertFalse(multi.tryLock(300, TimeUnit.MILLISECONDS), "blocked by " + single);
            Await.until("no node of the multi-lock left", WAIT, () -> multiNodes("/ex/a", "/ex/b").isEmpty());
            blocker.release();
        }
        multi.lock();
        try {
            for (ZkLock single : List.of(new ZkMutex(other, "/ex/a"), mutexB, rwA.writeLock(), rwA.readLock())) {
                assertEquals(Optional.empty(), single.tryAcquire(Duration.ofMillis(200)), single + " while the multi-lock holds");
            }
            assertFalse(new ZkMultiLock(other, List.of("/ex/b", "/ex/c")).tryLock(200, TimeUnit.MILLISECONDS),
                    "another multi-lock sharing one path");
            assertTrue(new ZkMultiLock(other, List.of("/ex/c", "/ex/d")).tryLock(), "a multi-lock on other paths");
        } finally {
            multi.unlock();
        }
        // The waits of other's that timed out left their one shared watch on the multi-lock's node in /ex/b
        // (waits never remove watches: see SharedWatches); the unlock deleted the node, which fires it. ZooKeeper
        // delivers a watch event to a session before any reply that shows the change, so once a read of other's
        // shows the node gone, other holds no watcher any more.
        Await.until("other's own read shows the multi-lock's node in /ex/b gone", WAIT,
                () -> new MultiLockNodes(other).multiNodes("/ex/b").isEmpty());
    }

    /** A waiter queued behind single locks on two paths holds once both leave, in either order. */
    @Test
    @ZkEnsemble
    void waitsOnOneNodeAtATimeUntilFirstEverywhere() throws Exception {
        ZkLease onA = new ZkMutex(other, "/wait/a").acquire();
        ZkLease onB = new ZkMutex(other, "/wait/b").acquire();
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/wait/a", "/wait/b"));
        CompletableFuture<ZkLease> waiting = multi.acquireAsync();
        Await.until("queued in both", WAIT, () -> multiNodes("/wait/a", "/wait/b").size() == 2);
        onB.release(); // not the queue it waits in first
        Await.holds("still waiting for /wait/a", Duration.ofMillis(300), () -> !waiting.isDone());
        onA.release();
        try (ZkLease lease = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            assertTrue(lease.isValid());
            assertTrue(lease.fencingToken() > onA.fencingToken() && lease.fencingToken() > onB.fencingToken());
        }
        Await.until("released: nothing left", WAIT, () -> multiNodes("/wait/a", "/wait/b").isEmpty());
    }

    /** The one token exceeds every earlier holder's of each path, and the next holder's exceeds it. */
    @Test
    @ZkEnsemble
    void oneTokenOrderedWithEveryPath() throws Exception {
        ZkMutex a = new ZkMutex(other, "/tok/a");
        ZkMutex b = new ZkMutex(other, "/tok/b");
        long ta;
        long tb;
        try (ZkLease la = a.acquire(); ZkLease lb = b.acquire()) {
            ta = la.fencingToken();
            tb = lb.fencingToken();
        }
        long tm;
        try (ZkLease m = new ZkMultiLock(client, List.of("/tok/b", "/tok/a")).acquire()) {
            tm = m.fencingToken();
        }
        assertTrue(tm > ta && tm > tb);
        try (ZkLease la = a.acquire()) {
            assertTrue(la.fencingToken() > tm);
        }
    }

    /** Reentrant per thread; a lease's commitIfHeld checks every node: one gone refuses the write. */
    @Test
    @ZkEnsemble
    void reentrantAndCommitChecksEveryNode() throws Exception {
        observer.zooKeeper().create("/stock", bytes("10"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/re/a", "/re/b", "/re/c"));
        multi.lock();
        multi.lock();
        long token = multi.fencingToken();
        multi.unlock();
        assertTrue(multi.isHeldByCurrentThread());
        assertEquals(token, multi.fencingToken());
        multi.commitIfHeld(List.of(Op.setData("/stock", bytes("9"), -1)));
        assertEquals("9", read("/stock"));
        String b = "/re/b/" + children("/re/b").get(0);
        observer.zooKeeper().delete(b, -1); // by hand: the hold's node in /re/b is gone
        assertThrows(LockLostException.class, () -> multi.commitIfHeld(List.of(Op.setData("/stock", bytes("8"), -1))));
        assertEquals("9", read("/stock"), "nothing applied");
        multi.unlock(); // one multi delete fails on the missing node: each remaining node is deleted
        assertEquals(List.of(), multiNodes("/re/a", "/re/b", "/re/c"));

        try (ZkLease lease = multi.acquire()) {
            assertTrue(lease.nodePath().startsWith("/re/a/multi-"), lease.nodePath());
            lease.commitIfHeld(List.of(Op.setData("/stock", bytes("7"), -1)));
            observer.zooKeeper().delete("/re/c/" + children("/re/c").get(0), -1);
            assertThrows(LockLostException.class, () -> lease.commitIfHeld(List.of()));
        }
        assertEquals("7", read("/stock"));
        assertEquals(List.of(), multiNodes("/re/a", "/re/b", "/re/c"));
    }

    /** Timeout with one path free and another held: false within the deadline, nothing left in either. */
    @Test
    @ZkEnsemble
    void timeoutWithOnePathHeldLeavesNothing() throws Exception {
        ZkLease held = new ZkMutex(other, "/to/held").acquire();
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/to/free", "/to/held"));
        long start = System.nanoTime();
        assertFalse(multi.tryLock(500, TimeUnit.MILLISECONDS));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        // 500 ms and room for a busy machine: a multi-lock that ignored its deadline waits for /to/held, never freed.
        assertTrue(tookMillis < 500 + 4_500, "returned after " + tookMillis + " ms");
        // On timeout the node's deletion is awaited for at most 100 ms, then goes on in the background (see
        // ZkLock): on a busy machine, through the ensemble's proxies, the round trip can take longer.
        Await.until("nothing left once the timed-out attempt's deletion is answered", WAIT,
                () -> multiNodes("/to/free", "/to/held").isEmpty());
        assertFalse(multi.tryLock(), "one look");
        assertEquals(Optional.empty(), multi.tryAcquire(Duration.ofMillis(200)));
        Await.until("nothing left", WAIT, () -> multiNodes("/to/free", "/to/held").isEmpty());
        assertEquals(1, children("/to/held").size(), "only the mutex's node");
        held.release();
    }

    /** Interrupt and cancel while queued in two directories leave no node in either. */
    @Test
    @ZkEnsemble
    void interruptAndCancelLeaveNothing() throws Exception {
        ZkLease held = new ZkMutex(other, "/int/b").acquire();
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/int/a", "/int/b"));
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                multi.lockInterruptibly();
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        }, "multi-waiter");
        waiter.start();
        Await.until("queued in both", WAIT, () -> multiNodes("/int/a", "/int/b").size() == 2);
        waiter.interrupt();
        assertTrue(outcome.get(WAIT.toSeconds(), TimeUnit.SECONDS) instanceof InterruptedException);
        Await.until("no node after the interrupt", WAIT, () -> multiNodes("/int/a", "/int/b").isEmpty());

        CompletableFuture<ZkLease> pending = multi.acquireAsync();
        Await.until("queued in both", WAIT, () -> multiNodes("/int/a", "/int/b").size() == 2);
        pending.cancel(false);
        Await.until("no node after the cancel", WAIT, () -> multiNodes("/int/a", "/int/b").isEmpty());
        held.release();
    }

    /**
     * The reply to the create multi is lost (the connection is cut after the multi reached the
     * server): the nodes are found again by their attempt id, in every directory; granted or
     * abandoned, nothing is left behind.
     */
    @Test
    @ZkEnsemble
    void lostCreateReplyLeavesNoOrphan() throws Exception {
        // The ensemble has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString());
             ZkClient cutOff = client(proxy.connectString())) {
            // Granted: the recovered nodes are adopted, not made twice.
            ZkMultiLock multi = new ZkMultiLock(cutOff, List.of("/lost/a", "/lost/b", "/lost/c"));
            CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
            CompletableFuture<ZkLease> granted = multi.acquireAsync();
            cut.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try (ZkLease lease = granted.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                for (String p : List.of("/lost/a", "/lost/b", "/lost/c")) {
                    assertEquals(1, children(p).size(), "one node in " + p);
                }
                assertTrue(lease.isValid());
            }
            assertEquals(List.of(), multiNodes("/lost/a", "/lost/b", "/lost/c"));

            // Abandoned while the reply is lost: its nodes are found and deleted.
            ZkLease blocker = new ZkMutex(other, "/lost/c").acquire();
            cut = proxy.cutAfterNextMulti();
            Optional<ZkLease> none = multi.tryAcquire(Duration.ofMillis(400));
            cut.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(Optional.empty(), none);
            Await.until("no orphan in any directory", WAIT, () -> multiNodes("/lost/a", "/lost/b", "/lost/c").isEmpty());
            blocker.release();
        }
    }

    /** Under a chroot: the nodes are made and released under it, in every directory. */
    @Test
    @ZkEnsemble
    void worksUnderAChroot() throws Exception {
        observer.zooKeeper().create("/app", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        try (ZkClient rooted = client(ensemble.connectString() + "/app")) {
            ZkMultiLock multi = new ZkMultiLock(rooted, List.of("/x", "/y/z"));
            try (ZkLease lease = multi.acquire()) {
                assertTrue(lease.nodePath().startsWith("/x/multi-"), lease.nodePath());
                assertEquals(1, children("/app/x").size());
                assertEquals(1, children("/app/y/z").size());
                lease.commitIfHeld(List.of());
            }
            assertEquals(List.of(), multiNodes("/app/x", "/app/y/z"));
        }
    }

    /** Coordination listeners see a multi-lock's wait and hold with every path, as recipe MULTI. */
    @Test
    @ZkEnsemble
    void listenersSeeEveryPath() throws Exception {
        List<io.zkcoord.observe.CoordinationEvent> granted = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<io.zkcoord.observe.CoordinationEvent> released = new java.util.concurrent.CopyOnWriteArrayList<>();
        client.addCoordinationListener(new io.zkcoord.observe.CoordinationListener() {
            @Override
            public void acquisitionGranted(io.zkcoord.observe.CoordinationEvent event, Duration waited, long token) {
                granted.add(event);
            }

            @Override
            public void released(io.zkcoord.observe.CoordinationEvent event, Duration held, long token) {
                released.add(event);
            }
        });
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/obs/b", "/obs/a"));
        multi.lock();
        multi.unlock();
        multi.acquire().release();
        assertEquals(2, granted.size());
        for (io.zkcoord.observe.CoordinationEvent e : granted) {
            assertEquals(io.zkcoord.observe.Recipe.MULTI, e.recipe());
            assertEquals(List.of("/obs/b", "/obs/a"), e.paths());
        }
        Await.until("both releases told", WAIT, () -> released.size() == 2);
    }

    /** The Inspector reports a multi-lock's node in each of its directories, with the shared token. */
    @Test
    @ZkEnsemble
    void inspectorSeesTheNodeInEveryDirectory() throws Exception {
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/ins/a", "/ins/b"));
        ZkLease lease = multi.acquire();
        CompletableFuture<ZkLease> waiter = new ZkMutex(other, "/ins/b").acquireAsync();
        Await.until("the mutex waits", WAIT, () -> children("/ins/b").size() == 2);
        for (String p : List.of("/ins/a", "/ins/b")) {
            io.zkcoord.inspect.QueueSnapshot snapshot = io.zkcoord.inspect.Inspector.inspect(observer, p);
            io.zkcoord.inspect.QueueSnapshot.Entry first = snapshot.entries().get(0);
            assertEquals("multi", first.kind());
            assertTrue(first.holding());
            assertEquals(lease.fencingToken(), first.fencingToken());
        }
        io.zkcoord.inspect.QueueSnapshot b = io.zkcoord.inspect.Inspector.inspect(observer, "/ins/b");
        assertEquals(2, b.entries().size());
        assertEquals("lock", b.entries().get(1).kind());
        assertFalse(b.entries().get(1).holding());
        lease.release();
        waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS).release();
    }

    // ------------------------------------------------------------------ helpers

    private static ZkClient client(String connect) {
        return MultiLockNodes.client(connect);
    }

    private List<String> children(String path) {
        return new MultiLockNodes(observer).children(path);
    }

    private List<String> multiNodes(String... dirs) {
        return new MultiLockNodes(observer).multiNodes(dirs);
    }

    private String read(String path) throws Exception {
        return new String(observer.zooKeeper().getData(path, false, null), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
