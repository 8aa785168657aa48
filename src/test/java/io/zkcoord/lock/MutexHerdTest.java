package io.zkcoord.lock;

import io.zkcoord.queue.QueueNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.HoldingThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZkMutex} is herd-free, seen from the server's own four-letter commands: each waiter
 * watches only its predecessor, nobody watches the directory, and a release fires one watch. Also
 * measures what one lock cycle costs in ZooKeeper requests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MutexHerdTest {

    private static final Logger log = LoggerFactory.getLogger(MutexHerdTest.class);

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int WAITERS = 20;
    /**
     * Long sessions, so idle pings (sent after a third of the session timeout without traffic) are
     * rare while requests are counted. The server's tick of 3 s allows up to 60 s.
     */
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);
    private static final int REPETITIONS = 7;

    private TestingServer server;
    private FourLetterWords flw;
    private ZkClient admin;
    private final List<ZkClient> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    @BeforeAll
    void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        // Port chosen by curator-test, tick 3 s (session timeouts up to 60 s), no limit on
        // connections from one address (21 clients plus the four-letter connections).
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 3_000, 0);
        server = new TestingServer(spec, true);
        flw = FourLetterWords.of(server.getConnectString());
        admin = client();
    }

    @AfterAll
    void stopServer() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() throws InterruptedException {
        for (ZkClient c : clients) {
            if (c != admin) {
                c.close();
            }
        }
        clients.removeIf(c -> c != admin);
        for (Thread t : threads) {
            t.interrupt(); // only a test that failed leaves one waiting on its latch
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
        threads.clear();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
        clients.add(c);
        return c;
    }

    /** Starts {@code t}; the test's clean-up interrupts it and waits for it to end. */
    private HoldingThread start(HoldingThread t) {
        threads.add(t);
        t.start();
        return t;
    }

    private List<String> children(String dir) {
        return LockQueue.children(admin, dir);
    }

    /**
     * With 20 waiters queued on 20 clients, wchp shows each lock node watched by exactly its
     * successor's session (the last by none), there is no child watch at all, one release fires
     * exactly one watch and lets exactly one waiter in, and so does every later handoff.
     */
    @Test
    void twentyWaitersEachWatchOnlyTheirPredecessor() throws Exception {
        String dir = "/herd/queue";
        ZkMutex held = new ZkMutex(client(), dir);
        held.lock();

        List<ZkClient> waiterClients = new ArrayList<>();
        List<Integer> acquired = new CopyOnWriteArrayList<>();
        List<HoldingThread> waiters = new ArrayList<>();
        for (int i = 1; i <= WAITERS; i++) {
            int id = i;
            ZkClient c = client();
            waiterClients.add(c);
            waiters.add(start(new HoldingThread("waiter-" + i, new ZkMutex(c, dir), t -> acquired.add(id))));
            // This waiter's node is queued before the next waiter starts: node i belongs to waiter i.
            Await.until(WAIT, () -> children(dir).size() == id + 1, "node of waiter " + id + " created");
        }
        Await.until(WAIT, () -> flw.wchsTotal() == WAITERS, () -> "every waiter set its watch; wchs total "
                + flw.wchsTotal());
        assertEquals(WAITERS + 1, children(dir).size());
        assertTrue(acquired.isEmpty(), "nobody gets in while the lock is held: " + acquired);

        // Each node is watched by exactly the session of the node after it; the last by nobody.
        List<QueueNode> queue = QueueNode.queue(children(dir));
        Map<String, Set<Long>> watchers = flw.wchp();
        Map<String, Long> owners = new HashMap<>();
        for (QueueNode n : queue) {
            Stat stat = admin.zooKeeper().exists(dir + "/" + n.name(), false);
            owners.put(n.name(), stat.getEphemeralOwner());
        }
        for (int i = 0; i < queue.size(); i++) {
            String nodePath = dir + "/" + queue.get(i).name();
            if (i + 1 < queue.size()) {
                long successor = owners.get(queue.get(i + 1).name());
                assertEquals(waiterClients.get(i).sessionId(), successor, "node " + (i + 1) + " is waiter " + (i + 1)
                        + "'s");
                assertEquals(Set.of(successor), watchers.get(nodePath),
                        "watchers of " + nodePath + " (queue position " + i + ")");
            } else {
                assertFalse(watchers.containsKey(nodePath) && !watchers.get(nodePath).isEmpty(),
                        "the last node is watched by nobody: " + watchers.get(nodePath));
            }
        }
        assertEquals(WAITERS, watchers.size(), "watched paths: " + watchers.keySet());

        // No child watch anywhere: every watch the server holds is one of the data watches above.
        assertEquals(flw.wchsTotal(), flw.watchCount(), "zk_watch_count must equal the data watches of wchs");

        // One release: one notification, one waiter in, everyone else still watching.
        long firedBefore = flw.watchesFired();
        held.unlock();
        Await.until(WAIT, () -> !acquired.isEmpty(), "the first waiter acquires");
        assertEquals(List.of(1), acquired);
        assertEquals(1, flw.watchesFired() - firedBefore, "watch notifications sent for one release");
        assertEquals(WAITERS, children(dir).size());
        assertEquals(WAITERS - 1, flw.wchsTotal(), "the other waiters still watch their predecessors");
        assertEquals(flw.wchsTotal(), flw.watchCount());
        assertEquals(List.of(1), acquired, "exactly one waiter acquired");

        // Every later handoff: the same.
        for (int i = 1; i < WAITERS; i++) {
            int next = i + 1;
            long before = flw.watchesFired();
            waiters.get(i - 1).release();
            Await.until(WAIT, () -> acquired.size() == next, "waiter " + next + " acquires");
            assertEquals(next, acquired.get(acquired.size() - 1), "FIFO: " + acquired);
            assertEquals(1, flw.watchesFired() - before, "watch notifications for handoff to waiter " + next);
            assertEquals(WAITERS - next, flw.wchsTotal());
        }
        waiters.get(WAITERS - 1).release();
        Await.until(WAIT, () -> children(dir).isEmpty(), () -> "nodes left: " + children(dir));
        assertEquals(List.of(), waiters.stream().map(HoldingThread::failure).filter(Objects::nonNull).toList());
        assertEquals(0, flw.watchCount(), "no watch left on the server");
    }

    /**
     * Counts the requests the server receives (mntr zk_packets_received, minus the mntr calls
     * themselves; the least of several repetitions, since an idle ping may slip in) for one
     * uncontended lock()+unlock() and for one handoff (release by the holder and acquisition by
     * the single waiter), and logs them.
     */
    @Test
    void requestsPerLockCycle() throws Exception {
        String dir = "/herd/cost";
        ZkMutex mutex = new ZkMutex(client(), dir);
        ZkMutex other = new ZkMutex(client(), dir);
        mutex.lock(); // creates the directory once; not counted
        mutex.unlock();

        long uncontended = fewest(() -> {
            long before = flw.packetsReceived();
            mutex.lock();
            mutex.unlock();
            return flw.packetsReceived() - before - 1;
        });

        long[] enqueue = new long[] {Long.MAX_VALUE};
        long handoff = fewest(() -> {
            mutex.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            long beforeEnqueue = flw.packetsReceived();
            HoldingThread waiter = start(new HoldingThread("cost-waiter", other, t -> acquired.countDown()));
            // Queued once the server holds its watch on the predecessor (a data watch: the lone
            // holder watches its directory's children); every wchs call made to see that counts
            // one packet, and is subtracted.
            int[] polls = {0};
            Await.until(WAIT, () -> {
                polls[0]++;
                return flw.wchsTotal() >= 1;
            }, "the waiter watches its predecessor");
            long afterEnqueue = flw.packetsReceived();
            enqueue[0] = Math.min(enqueue[0], afterEnqueue - beforeEnqueue - 1 - polls[0]);
            mutex.unlock();
            acquired.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            long afterHandoff = flw.packetsReceived();
            waiter.release();
            waiter.join(WAIT.toMillis());
            return afterHandoff - afterEnqueue - 1;
        });

        log.info("ZooKeeper requests per uncontended lock()+unlock(): {}", uncontended);
        log.info("ZooKeeper requests for a waiter to queue behind a holder (create, getChildren, getData+watch): {}",
                enqueue[0]);
        log.info("ZooKeeper requests per handoff (holder's delete + the waiter's acquisition): {}", handoff);
        log.info("so a contended lock cycle costs {} requests", enqueue[0] + handoff);
        assertEquals(3, uncontended, "create, getChildren, delete");
        assertTrue(handoff >= 1 && handoff <= 2, "a handoff costs the delete, and at most one read: " + handoff);
        assertEquals(3, enqueue[0], "create, getChildren, getData with a watch");
        assertTrue(children(dir).isEmpty());
    }


    /** A measurement that may throw. */
    @FunctionalInterface
    private interface Measurement {
        long measure() throws Exception;
    }

    /** The least of {@link #REPETITIONS} measurements: pings only ever add. */
    private static long fewest(Measurement m) throws Exception {
        long least = Long.MAX_VALUE;
        List<Long> all = new ArrayList<>();
        for (int i = 0; i < REPETITIONS; i++) {
            long v = m.measure();
            all.add(v);
            least = Math.min(least, v);
        }
        log.debug("measurements {}", all);
        return least;
    }
}
