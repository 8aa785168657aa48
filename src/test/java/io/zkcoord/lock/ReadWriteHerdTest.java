package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.CounterWindow;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worked example of the read/write recipe, checked on the server with four-letter words: queue
 * W0 (holding) W1 R2 ... R21, one session per node. W1 watches W0, the twenty readers watch W1, and
 * nobody watches the directory. W0's release fires one watch; W1's release fires twenty, and the
 * twenty readers hold together. Watches fired and ZooKeeper requests of both releases are logged;
 * writes are counted exactly, in the first contention episode on the key and in the next.
 */
@Timeout(120)
class ReadWriteHerdTest {

    static {
        FourLetterWords.enableAllCommands();
    }

    private static final Logger log = LoggerFactory.getLogger(ReadWriteHerdTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int READERS = 20;
    private static final String PATH = "/herd/stock";
    /**
     * Asked for so that idle clients ping rarely; the server caps it at 20 ticks (20 s for a
     * TestingServer). A ZooKeeper client pings only after sending nothing for about a third of the
     * session timeout (at most 10 s), so the test makes every client send one request just before
     * each measured release: no ping falls inside the window, which lasts well under a second.
     */
    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(60);

    private TestingServer server;
    private FourLetterWords flw;
    private ZkClient admin;
    private final List<Party> parties = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = new TestingServer(true);
        flw = FourLetterWords.of(server.getConnectString());
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
    }

    @AfterEach
    void stopServer() throws Exception {
        for (Party p : parties) {
            p.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /**
     * W0 W1 R2..R21: the watches on the server are exactly W1 on W0 and the twenty readers on W1,
     * with no child watch; W0's release fires one watch and hands over to W1; W1's release fires
     * twenty and all twenty readers hold at the same time. Played twice on the same key by the
     * same clients: in the first episode W0 and W1 each read the queue before their release (W0
     * read its node alone when it was granted, and its watch of the directory saw the others
     * queue; W1 read its node alone behind W0 when it queued: a stale view), and each release is
     * one delete; in the second both know the directory contended, and each release is one
     * delete, with no read first.
     */
    @Test
    void workedExample() throws Exception {
        Party w0 = party("W0");
        Party w1 = party("W1");
        List<Party> readers = new ArrayList<>();
        for (int i = 2; i < 2 + READERS; i++) {
            readers.add(party("R" + i));
        }
        log.info("session timeout negotiated: {} ms", w0.client.zooKeeper().getSessionTimeout());

        Window[] firstEpisode = round(w0, w1, readers);
        // Each release may remove the directory (W0's watch saw the others queue; W1's view is
        // stale): it reads the queue first, finds the others, and deletes its node alone. No
        // removal the server refuses.
        assertEquals(1, firstEpisode[0].writes, "first episode, W0's release: one delete");
        assertEquals(1, firstEpisode[1].writes, "first episode, W1's release: one delete");
        assertTrue(firstEpisode[0].requests <= 3, "W0's release: " + firstEpisode[0].requests + " requests");
        assertTrue(firstEpisode[1].requests <= 2 + READERS, "W1's release: " + firstEpisode[1].requests + " requests");
        assertTrue(admin.zooKeeper().exists(PATH, false) != null,
                "the readers' views showed W0 and W1: nobody removed the directory");

        Window[] steady = round(w0, w1, readers);
        assertEquals(1, steady[0].writes, "W0's release: one delete");
        assertEquals(1, steady[1].writes, "W1's release: one delete");
        // At most the delete and one queue read per woken waiter (ZooKeeper's recipe re-reads).
        assertTrue(steady[0].requests <= 2, "W0's release: " + steady[0].requests + " requests");
        assertTrue(steady[1].requests <= 1 + READERS, "W1's release: " + steady[1].requests + " requests");
    }

    /**
     * Queues W0 (holding) W1 R2..R21, each node in place before the next is asked for, checks
     * the watches, releases W0 and then W1, and at the end every reader.
     *
     * @return the windows of W0's release and of W1's
     */
    private Window[] round(Party w0, Party w1, List<Party> readers) throws Exception {
        w0.lockNow(w0.write());
        Future<Void> w1Holds = w1.lockLater(w1.write());
        awaitQueueSize(2);
        CountDownLatch allHold = new CountDownLatch(READERS);
        List<Future<Boolean>> readersHeldTogether = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            Party r = readers.get(i);
            readersHeldTogether.add(r.lockLater(r.read(), () -> {
                allHold.countDown();
                return allHold.await(WAIT.toMillis(), TimeUnit.MILLISECONDS); // holding, wait for the others
            }));
            awaitQueueSize(3 + i);
        }
        Await.until("21 data watches set", WAIT, () -> flw.wchsTotal() == 1 + READERS);

        List<String> nodes = nodePaths();
        assertEquals(2 + READERS, nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            assertEquals(parties.get(i).sessionId(), owner(nodes.get(i)), "node " + i + " belongs to " + parties.get(i));
        }
        Set<Long> readerSessions = new HashSet<>();
        readers.forEach(r -> readerSessions.add(r.sessionId()));
        Map<String, Set<Long>> expected = new LinkedHashMap<>();
        expected.put(nodes.get(0), Set.of(w1.sessionId()));
        expected.put(nodes.get(1), readerSessions);
        assertEquals(expected, flw.wchp(), "W1 watches W0, the readers watch W1, nothing else is watched");
        assertNoChildWatch();

        // Release 1: W0 leaves, W1 takes over.
        Window first = new Window();
        w0.release(w0.write());
        get(w1Holds);
        first.close();
        assertFalse(readersHeldTogether.stream().anyMatch(Future::isDone), "no reader passes W1");
        assertEquals(Map.of(nodes.get(1), readerSessions), flw.wchp(), "only the readers' watches remain");
        assertNoChildWatch();

        // Release 2: W1 leaves, the twenty readers wake and hold together.
        Window second = new Window();
        w1.release(w1.write());
        for (Future<Boolean> f : readersHeldTogether) {
            assertTrue(get(f), "each reader saw all twenty hold while it held");
        }
        second.close();
        assertEquals(Map.of(), flw.wchp(), "no watch left");
        assertEquals(0, flw.watchCount());
        assertEquals(READERS, nodePaths().size());

        log.info("worked example, W0's release: {} watch(es) fired, {} ZooKeeper request(s) ({} write(s), {} read(s))",
                first.fired, first.requests, first.writes, first.reads);
        log.info("worked example, W1's release: {} watch(es) fired, {} ZooKeeper request(s) ({} write(s), {} read(s))",
                second.fired, second.requests, second.writes, second.reads);
        assertEquals(1, first.fired, "W0's release wakes W1 only");
        assertEquals(READERS, second.fired, "W1's release wakes the twenty readers");

        for (Party r : readers) {
            r.release(r.read());
        }
        awaitQueueSize(0);
        return new Window[] {first, second};
    }

    /**
     * Counts what the server saw between its construction and {@link #close()}: watch notifications
     * sent, and requests received net of the {@code mntr} call that closes the window. Every client
     * sends one request first (outside the window), so that none pings inside it.
     */
    private final class Window {
        final Map<String, String> before;
        long fired;
        long requests;
        long writes;
        long reads;

        Window() throws Exception {
            for (Party p : parties) {
                p.client.zooKeeper().exists("/", false);
            }
            admin.zooKeeper().exists("/", false);
            before = flw.mntr();
        }

        void close() {
            Map<String, String> after = flw.mntr();
            fired = CounterWindow.fired(after) - CounterWindow.fired(before);
            requests = delta(after, "zk_packets_received") - 1; // the closing mntr counts itself
            writes = delta(after, "zk_cnt_updatelatency");
            reads = delta(after, "zk_cnt_readlatency");
        }

        private long delta(Map<String, String> after, String key) {
            return CounterWindow.value(after, key) - CounterWindow.value(before, key);
        }
    }

    /** The {@code mntr} call's own packet: two calls in a row differ by exactly one. */
    @Test
    void mntrCountsItselfOnce() throws Exception {
        ZooKeeper zk = admin.zooKeeper();
        zk.exists("/", false); // no ping for the next 10 s
        long first = flw.packetsReceived();
        long second = flw.packetsReceived();
        assertEquals(1, second - first);
        zk.exists("/", false);
        zk.getChildren("/", false);
        long third = flw.packetsReceived();
        assertEquals(3, third - second, "two requests and the mntr");
    }

    // ------------------------------------------------------------------ helpers

    private Party party(String name) {
        ZkClient client = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT)
                .build();
        Party p = new Party(name, client, PATH, event -> { }, WAIT);
        parties.add(p);
        return p;
    }

    /** Full paths of the lock nodes, in queue order. */
    private List<String> nodePaths() throws Exception {
        return LockQueue.of(admin, PATH).stream().map(n -> PATH + "/" + n.name()).toList();
    }

    private long owner(String nodePath) throws Exception {
        Stat stat = admin.zooKeeper().exists(nodePath, false);
        return stat == null ? 0 : stat.getEphemeralOwner();
    }

    private void awaitQueueSize(int n) {
        LockQueue.awaitSize(admin, PATH, n, WAIT);
    }

    /** {@code wchs} lists data watches only, {@code zk_watch_count} counts child watches too. */
    private void assertNoChildWatch() {
        assertEquals(flw.wchsTotal(), flw.watchCount(), "no child watch is set");
    }

    private static <T> T get(Future<T> future) throws Exception {
        return Party.get(future, WAIT);
    }
}
