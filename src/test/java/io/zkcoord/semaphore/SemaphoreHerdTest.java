package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.queue.QueueNode;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.CounterWindow;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
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
 * {@link ZkSemaphore} is herd-free, seen from the server's own four-letter commands. Three permits,
 * three holders (one client each) and fifty waiters queued behind them on ten clients (waiter
 * {@code i} on client {@code i mod 10}, so neighbours in the queue never share a session), each
 * waiter queued only once the previous one's node exists, so that the queue order is known.
 *
 * <p>The rule ({@link SemaphoreRule}) predicts, for one release or one holder's session expiry:
 * two notifications (the first waiter through its child watch on the directory; its successor
 * through the first waiter's promotion announcement) and about five requests (the delete; the
 * first waiter's {@code getChildren} and {@code setData}; its successor's {@code getChildren}, and
 * {@code getChildren} with a watch), whatever the queue length and the permits.
 *
 * <p>What is counted, in a window opened after every client sent one request (so that no client is
 * due to ping inside it) and closed once the server's counters stand still:
 * <ul>
 *   <li><b>notifications</b>: the increase of the sum of {@code zk_sum_node_created_watch_count},
 *       {@code zk_sum_node_deleted_watch_count}, {@code zk_sum_node_changed_watch_count} and {@code
 *       zk_sum_node_children_watch_count} ({@code mntr});
 *   <li><b>requests</b>: the increase of {@code zk_packets_received}, minus the {@code mntr} calls
 *       made inside the window (each counts one packet);
 *   <li><b>requests of the other sessions</b>: the increase of {@code recved} that the four-letter
 *       {@code cons} reports per connection, summed over the sessions other than the leaving
 *       holder's that were open when the window opened (the waiters' and the other holders'; the
 *       {@code cons} calls are made just outside the window). For a release this is every request
 *       but the holder's delete. For an expiry it leaves out what the expiry itself costs and has
 *       nothing to do with the semaphore: the second handle's connect and {@code closeSession}
 *       ({@link SessionExpiry}), the expired handle's reconnection attempts and the new session
 *       its client opens, as far as they fall inside the window. The expiry test therefore asserts
 *       on notifications and on these requests, and only logs the total.
 * </ul>
 * Every measured number is logged at INFO, prefixed {@code MEASURED}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SemaphoreHerdTest {

    static {
        FourLetterWords.enableAllCommands();
    }

    private static final Logger log = LoggerFactory.getLogger(SemaphoreHerdTest.class);

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int PERMITS = 3;
    private static final int WAITERS = 50;
    private static final int WAITER_CLIENTS = 10;
    /**
     * Long sessions, so idle pings (sent after a third of the session timeout without traffic) are
     * rare; the server's tick of 3 s allows up to 60 s. Every client also sends one request just
     * before each measured window.
     */
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);
    private static final int REPETITIONS = 7;
    private static final Pattern CONS_LINE = Pattern.compile("recved=(\\d+).*?sid=0x([0-9a-fA-F]+)");

    private TestingServer server;
    private FourLetterWords flw;
    private ZkClient admin;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        // Port chosen by curator-test, tick 3 s (sessions up to 60 s), no limit on connections
        // from one address (14 clients, the expiry's second handle and the four-letter connections).
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 3_000, 0);
        server = new TestingServer(spec, true);
        flw = FourLetterWords.of(server.getConnectString());
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
    }

    @AfterAll
    void stopServer() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() {
        for (ZkClient c : clients) {
            c.close();
        }
        clients.clear();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
        clients.add(c);
        return c;
    }

    // ------------------------------------------------------------------ (a) release

    /**
     * One holder's {@code release()}, in the first contention episode on a fresh key: at most two
     * notifications and 6 requests, 3 of them writes, and the first waiter, only it, gets the
     * lease. Afterwards the next waiter has taken over the child watch.
     */
    @Test
    void oneReleaseNotifiesTwoSessionsAtMost() throws Exception {
        Queue q = queue("/herd/sem/release", client());

        Window w = new Window(q);
        q.holders.get(0).release();
        ZkLease granted = q.waiters.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        w.close();

        log.info("MEASURED semaphore release, {} permits, {} waiters: notifications {}, requests {} "
                + "(writes {}, reads {}); of which the waiters' sessions {} (all but the holder's delete); per session {}",
                PERMITS, WAITERS, w.fired, w.requests, w.writes, w.reads, w.othersRequests, w.perSession);
        assertTrue(granted.isValid());
        assertEquals(q.nodes.get(PERMITS), granted.nodePath(), "the first waiter's node holds");
        assertOnlyFirstWaiterGranted(q);
        assertTrue(w.fired <= 2, "notifications for one release: " + w.fired);
        // The holder was granted on a read of its node alone, on a key new to its client, and
        // its watch of the directory saw the others queue: its release reads the queue first,
        // then deletes the node alone (no removal the server refuses).
        assertEquals(2, w.writes, "delete, the first waiter's promotion (setData)");
        assertTrue(w.requests <= 6, "requests for one release (the holder's read, delete, getChildren + setData of"
                + " the first waiter, two getChildren of its successor): " + w.requests);

        // The new queue: 3 holders (2 old, the promoted waiter) and 49 waiters; the new first
        // waiter holds the only child watch, the 48 behind it watch their predecessors.
        Await.until(WAIT, () -> flw.watchCount() == WAITERS - 1 && flw.wchsTotal() == WAITERS - 2,
                () -> "watches after the handoff: zk_watch_count " + flw.watchCount() + ", wchs " + flw.wchsTotal());
        log.info("MEASURED after the release: zk_watch_count {}, data watches (wchs) {}, child watches {}",
                flw.watchCount(), flw.wchsTotal(), flw.watchCount() - flw.wchsTotal());
    }

    /**
     * The same release in the steady state: the holder's client found another member queued in
     * this directory before, so it knows the directory contended and its
     * release, granted again on a read of its node alone, is one delete: 2 writes with the first
     * waiter's promotion, 5 requests at most, two notifications at most.
     */
    @Test
    void oneReleaseInTheSteadyStateCostsFiveRequestsAtMost() throws Exception {
        String dir = "/herd/sem/steady";
        ZkClient holderClient = client();
        ZkLease first = new ZkSemaphore(holderClient, dir, PERMITS).acquire(); // alone: makes the directory
        ZkLease other = new ZkSemaphore(client(), dir, PERMITS).acquire();
        first.release(); // its watch saw the other member queue: read, the delete alone, contended
        other.release(); // its view showed the first one's node: it removes nothing
        assertNotNull(admin.zooKeeper().exists(dir, false), "the directory is kept");
        assertEquals(List.of(), children(dir), "empty");
        Queue q = queue(dir, holderClient);

        Window w = new Window(q);
        q.holders.get(0).release();
        ZkLease granted = q.waiters.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        w.close();

        log.info("MEASURED semaphore release in the steady state, {} permits, {} waiters: notifications {}, requests {} "
                + "(writes {}, reads {}); per session {}", PERMITS, WAITERS, w.fired, w.requests, w.writes, w.reads,
                w.perSession);
        assertTrue(granted.isValid());
        assertEquals(q.nodes.get(PERMITS), granted.nodePath(), "the first waiter's node holds");
        assertOnlyFirstWaiterGranted(q);
        assertTrue(w.fired <= 2, "notifications for one release: " + w.fired);
        assertEquals(2, w.writes, "delete, the first waiter's promotion (setData)");
        assertTrue(w.requests <= 5, "requests for one release (delete, getChildren + setData of the first waiter,"
                + " two getChildren of its successor): " + w.requests);
    }

    // ------------------------------------------------------------------ (b) a holder's session expires

    /**
     * One holder's session expired on the server (its ephemeral node goes with it): at most two
     * notifications, and the first waiter, only it, gets the lease; the sessions other than the
     * expired one send at most 4 requests. The total is logged, not asserted: the expiry's own
     * machinery (see the class comment) adds requests of its own.
     */
    @Test
    void oneHolderExpiryNotifiesTwoSessionsAtMost() throws Exception {
        Queue q = queue("/herd/sem/expiry", client());
        ZkLease victim = q.holders.get(0);

        Window w = new Window(q);
        SessionExpiry.expireOnServer(q.holderClients.get(0).zooKeeper(), server.getConnectString(), WAIT);
        ZkLease granted = q.waiters.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        w.close();

        log.info("MEASURED semaphore holder expiry, {} permits, {} waiters: notifications {}, requests {} (writes {},"
                + " reads {}; all of them, the expiry's own included); of which the waiters' and other holders'"
                + " sessions {}; per surviving session {}", PERMITS, WAITERS, w.fired, w.requests, w.writes, w.reads,
                w.othersRequests, w.perSession);
        assertTrue(granted.isValid());
        assertEquals(q.nodes.get(PERMITS), granted.nodePath(), "the first waiter's node holds");
        assertOnlyFirstWaiterGranted(q);
        assertTrue(w.fired <= 2, "notifications for one holder's expiry: " + w.fired);
        assertTrue(w.othersRequests <= 4, "requests of the other sessions for one expiry (getChildren + setData of the"
                + " first waiter, two getChildren of its successor): " + w.othersRequests);
        victim.whenLost().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertFalse(victim.isValid(), "the expired holder's lease reports the loss");
    }

    // ------------------------------------------------------------------ (c) uncontended

    /**
     * Uncontended {@code acquire()}+{@code release()} on an empty semaphore, after a first
     * acquisition that recorded the permit count and created the directory: 3 requests (create,
     * getChildren pipelined with it, delete), no promotion announcement. The least of several
     * repetitions, since an idle ping may slip in.
     */
    @Test
    void uncontendedAcquireReleaseCostsThreeRequests() throws Exception {
        ZkSemaphore sem = new ZkSemaphore(client(), "/herd/sem/uncontended", PERMITS);
        sem.acquire().release(); // records the permit count, creates the directory; not counted

        List<Long> all = new ArrayList<>();
        for (int i = 0; i < REPETITIONS; i++) {
            long before = flw.packetsReceived();
            ZkLease lease = sem.acquire();
            lease.release();
            all.add(flw.packetsReceived() - before - 1); // the closing mntr counts itself
        }
        long least = all.stream().mapToLong(Long::longValue).min().orElseThrow();
        log.info("MEASURED uncontended acquire()+release(): {} requests (least of {}: {})", least, REPETITIONS, all);
        assertEquals(3, least, "create, getChildren, delete");
        assertTrue(admin.zooKeeper().getChildren("/herd/sem/uncontended", false).isEmpty());
    }

    // ------------------------------------------------------------------ the queue

    /**
     * Three holders on their own clients (holder 0 on {@code holder0}, which takes its lease first),
     * fifty waiters on ten clients, the queue checked on the server.
     */
    private final class Queue {
        final String dir;
        final List<ZkClient> holderClients = new ArrayList<>();
        final List<ZkLease> holders = new ArrayList<>();
        final List<ZkClient> waiterClients = new ArrayList<>();
        final List<CompletableFuture<ZkLease>> waiters = new ArrayList<>();
        /** Full paths, in queue order: the holders', then waiter 0's, 1's, ... */
        List<String> nodes;

        Queue(String dir) {
            this.dir = dir;
        }

        /** Everyone but the admin client. */
        List<ZkClient> everyone() {
            List<ZkClient> all = new ArrayList<>(holderClients);
            all.addAll(waiterClients);
            return all;
        }
    }

    private Queue queue(String dir, ZkClient holder0) throws Exception {
        Queue q = new Queue(dir);
        for (int i = 0; i < PERMITS; i++) {
            ZkClient c = i == 0 ? holder0 : client();
            q.holderClients.add(c);
            q.holders.add(new ZkSemaphore(c, dir, PERMITS).acquire());
        }
        List<ZkSemaphore> waiterSemaphores = new ArrayList<>();
        for (int k = 0; k < WAITER_CLIENTS; k++) {
            ZkClient c = client();
            q.waiterClients.add(c);
            waiterSemaphores.add(new ZkSemaphore(c, dir, PERMITS));
        }
        for (int i = 0; i < WAITERS; i++) {
            q.waiters.add(waiterSemaphores.get(i % WAITER_CLIENTS).acquireAsync());
            int nodes = PERMITS + i + 1;
            // This waiter's node exists before the next one is asked for: node PERMITS + i is waiter i's.
            Await.until(WAIT, () -> children(dir).size() == nodes, () -> "node of waiter " + nodes + " created");
        }
        // One child watch (the first waiter's) and one data watch per later waiter.
        Await.until(WAIT, () -> flw.watchCount() == WAITERS && flw.wchsTotal() == WAITERS - 1,
                () -> "every waiter watching: zk_watch_count " + flw.watchCount() + ", wchs " + flw.wchsTotal());
        assertTrue(q.waiters.stream().noneMatch(CompletableFuture::isDone), "nobody gets a lease: all 3 are held");

        List<QueueNode> queue = QueueNode.queue(children(dir));
        q.nodes = queue.stream().map(n -> dir + "/" + n.name()).toList();
        assertEquals(PERMITS + WAITERS, q.nodes.size());
        for (int i = 0; i < PERMITS; i++) {
            assertEquals(q.holders.get(i).nodePath(), q.nodes.get(i), "holder " + i + "'s node");
        }
        for (int i = 0; i < WAITERS; i++) {
            assertEquals(q.waiterClients.get(i % WAITER_CLIENTS).sessionId(), owner(q.nodes.get(PERMITS + i)),
                    "node " + (PERMITS + i) + " is waiter " + i + "'s");
        }
        // wchp: each waiter but the last is watched by exactly the next waiter's session; no holder is watched.
        Map<String, Set<Long>> watched = flw.wchp();
        Map<String, Set<Long>> expected = new LinkedHashMap<>();
        for (int i = 0; i + 1 < WAITERS; i++) {
            expected.put(q.nodes.get(PERMITS + i), Set.of(q.waiterClients.get((i + 1) % WAITER_CLIENTS).sessionId()));
        }
        assertEquals(expected, watched, "each waiter but the first watches its predecessor, and nothing else is watched");
        assertEquals(1, flw.watchCount() - flw.wchsTotal(), "exactly one child watch (the first waiter's)");
        return q;
    }

    private void assertOnlyFirstWaiterGranted(Queue q) {
        List<Integer> done = new ArrayList<>();
        for (int i = 1; i < WAITERS; i++) {
            if (q.waiters.get(i).isDone()) {
                done.add(i);
            }
        }
        assertEquals(List.of(), done, "waiters other than the first whose future completed");
        assertEquals(PERMITS + WAITERS - 1, children(q.dir).size(), "one node left, the others stay");
    }

    // ------------------------------------------------------------------ the meter

    /**
     * What the server saw from its opening to {@link #close()}: notifications sent, requests
     * received net of the {@code mntr} calls in between, and requests per surviving session from
     * {@code cons} (read just outside the window). Opening it makes every client send one request
     * first, so that none pings inside it, and waits until the counters stand still.
     */
    private final class Window {
        private final Queue q;
        /** Sessions open when the window opened, by id: the holders', the waiter clients', admin's. */
        private final Map<Long, String> names = new HashMap<>();
        /** The session of holder 0, the one that leaves (released, or expired). */
        private final long leaving;
        private final Map<Long, Long> consBefore;
        private final CounterWindow counters;
        long fired;
        long requests;
        long writes;
        long reads;
        /** Requests of every session but the leaving holder's (and admin's, which sends none). */
        long othersRequests;
        final Map<String, Long> perSession = new LinkedHashMap<>();

        Window(Queue q) throws Exception {
            this.q = q;
            for (int i = 0; i < q.holderClients.size(); i++) {
                names.put(q.holderClients.get(i).sessionId(), "holder" + i);
            }
            for (int k = 0; k < q.waiterClients.size(); k++) {
                names.put(q.waiterClients.get(k).sessionId(), "waiterClient" + k);
            }
            names.put(admin.sessionId(), "admin");
            leaving = q.holderClients.get(0).sessionId();
            for (ZkClient c : q.everyone()) {
                c.zooKeeper().exists("/", false);
            }
            admin.zooKeeper().exists("/", false);
            CounterWindow.settle(flw);
            consBefore = receivedBySession();
            counters = CounterWindow.open(flw);
        }

        void close() throws Exception {
            counters.close();
            Map<Long, Long> consAfter = receivedBySession();
            fired = counters.fired();
            requests = counters.requests();
            writes = counters.writes();
            reads = counters.reads();
            othersRequests = 0;
            for (Map.Entry<Long, Long> e : consAfter.entrySet()) {
                Long was = consBefore.get(e.getKey());
                if (was == null) {
                    continue; // a connection opened inside the window (the expiry's)
                }
                long d = e.getValue() - was;
                if (d != 0) {
                    perSession.put(names.getOrDefault(e.getKey(), "0x" + Long.toHexString(e.getKey())), d);
                }
                if (names.containsKey(e.getKey()) && e.getKey() != leaving) {
                    othersRequests += d;
                }
            }
        }
    }

    /**
     * {@code cons}: packets received per session, summed over that session's connections (the
     * four-letter connections have no session and are left out).
     */
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

    // ------------------------------------------------------------------ helpers

    private List<String> children(String dir) {
        try {
            return admin.zooKeeper().getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private long owner(String nodePath) throws Exception {
        Stat stat = admin.zooKeeper().exists(nodePath, false);
        return stat == null ? 0 : stat.getEphemeralOwner();
    }
}
