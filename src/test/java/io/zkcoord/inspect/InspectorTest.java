package io.zkcoord.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Inspector} against a real server and the real recipes: the holders it reports are the
 * holds the recipes granted (the leases whose futures completed, the elected participant), at queue
 * lengths 1, 10 and 1000, in two requests counted by the server (the {@code recved} count of the
 * inspecting session's connection in {@code cons}, the smallest of three tries so that a ping
 * cannot add one). Every measured cost is
 * logged at INFO, prefixed {@code MEASURED}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InspectorTest {

    static {
        FourLetterWords.enableAllCommands();
    }

    private static final Logger log = LoggerFactory.getLogger(InspectorTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Long sessions: idle pings (a third of the timeout) are rare inside a measurement. */
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);

    private TestingServer server;
    private FourLetterWords flw;
    private ZkClient inspector;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    void startServer() throws Exception {
        // Tick 3 s (sessions up to 60 s), no limit on connections from one address.
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 3_000, 0), true);
        flw = FourLetterWords.of(server.getConnectString());
        inspector = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(ZkClient::close);
        clients.clear();
    }

    @AfterAll
    void stopServer() throws Exception {
        inspector.close();
        server.close();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
        clients.add(c);
        return c;
    }

    /** A mutex: the one lease granted is the one node reported holding; owner fields are this process's. */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 1000})
    void mutexQueue(int n) throws Exception {
        String dir = "/inspect/mutex-" + n;
        ZkMutex mutex = new ZkMutex(client(), dir);
        List<CompletableFuture<ZkLease>> leases = enqueue(dir, n, 1, i -> mutex.acquireAsync());
        QueueSnapshot s = settled(dir, n, leases, 1);
        assertEquals(grantedNodes(leases), holdingNodes(s));
        QueueSnapshot.Entry first = s.entries().get(0);
        assertEquals("lock", first.kind());
        assertEquals(leases.get(0).join().fencingToken(), first.fencingToken());
        assertEquals(ProcessHandle.current().pid(), first.ownerPid());
        assertEquals(Thread.currentThread().getName(), first.ownerThread());
        assertFalse(first.ownerHost().isEmpty());
        assertEquals(clients.get(clients.size() - 1).sessionId(), first.sessionId());
        assertTrue(!first.created().isAfter(s.readAt()), "created " + first.created() + " before " + s.readAt());
        assertOrdered(s);
        assertTwoRequests("mutex", n, dir);
    }

    /** A read/write lock, three reads then a write, then every fourth a write: the leading readers all hold. */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 1000})
    void readWriteQueue(int n) throws Exception {
        String dir = "/inspect/rw-" + n;
        ZkReadWriteLock rw = new ZkReadWriteLock(client(), dir);
        List<CompletableFuture<ZkLease>> leases = enqueue(dir, n, 4,
                i -> (i % 4 == 3 ? rw.writeLock() : rw.readLock()).acquireAsync());
        QueueSnapshot s = settled(dir, n, leases, Math.min(n, 3));
        assertEquals(grantedNodes(leases), holdingNodes(s));
        for (int i = 0; i < Math.min(n, 4); i++) {
            assertEquals(i == 3 ? "write" : "read", s.entries().get(i).kind(), "kind of node " + i);
        }
        assertEquals(n / 4, s.entries().stream().filter(e -> e.kind().equals("write")).count());
        assertOrdered(s);
        assertTwoRequests("read/write", n, dir);
    }

    /** A semaphore of 3 permits (read from the directory's data): the first three hold. */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 1000})
    void semaphoreQueue(int n) throws Exception {
        String dir = "/inspect/sem-" + n;
        ZkSemaphore semaphore = new ZkSemaphore(client(), dir, 3);
        List<CompletableFuture<ZkLease>> leases = enqueue(dir, n, 3, i -> semaphore.acquireAsync());
        QueueSnapshot s = settled(dir, n, leases, Math.min(n, 3));
        assertEquals(grantedNodes(leases), holdingNodes(s));
        assertTrue(s.entries().stream().allMatch(e -> e.kind().equals("sem")));
        assertOrdered(s);
        assertTwoRequests("semaphore", n, dir);
    }

    /** An election: the participant that leads is the one reported holding, its id as the owner thread. */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 1000})
    void electionQueue(int n) throws Exception {
        String dir = "/inspect/election-" + n;
        ZkClient c = client();
        List<ZkLeaderElection> participants = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ZkLeaderElection e = new ZkLeaderElection(c, dir, "participant " + i);
                participants.add(e);
                e.start();
            }
            Await.until("all " + n + " participants queued", WAIT, () -> children(dir) == n);
            Await.until("a leader", WAIT, () -> participants.stream().anyMatch(ZkLeaderElection::isLeader));
            ZkLeaderElection leader = participants.stream().filter(ZkLeaderElection::isLeader).findFirst().orElseThrow();
            QueueSnapshot s = Inspector.inspect(inspector, dir);
            assertEquals(n, s.entries().size());
            List<QueueSnapshot.Entry> holders = s.holders();
            assertEquals(1, holders.size());
            assertEquals(leader.participantId(), holders.get(0).ownerThread());
            assertEquals(leader.epoch(), holders.get(0).fencingToken());
            assertEquals("leader", holders.get(0).kind());
            assertEquals(-1, holders.get(0).ownerPid());
            assertOrdered(s);
            assertTwoRequests("election", n, dir);
        } finally {
            participants.forEach(ZkLeaderElection::close);
        }
    }

    /**
     * Multi-lock nodes (kind {@code multi}, owner data followed by {@code paths=}), made here as the
     * multi-lock makes them: one first in the queue is reported holding (first here), a mutex and a
     * read waiting behind it are not; a multi node behind a mutex holder waits.
     */
    @Test
    void multiLockNodes() throws Exception {
        String dir = "/inspect/multi";
        ZkClient c = client();
        // A directory made by hand: no release removes it, so nodes can be made in it by hand too.
        for (String p : List.of("/inspect", dir)) {
            try {
                c.zooKeeper().create(p, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // made by an earlier test
            }
        }
        ZkMutex mutex = new ZkMutex(c, dir);
        try (ZkLease holder = mutex.acquire()) {
            String waitingMulti = createMulti(c, dir, "exporter 2");
            QueueSnapshot s = Inspector.inspect(inspector, dir);
            assertEquals(List.of(nameOf(holder.nodePath())), holdingNodes(s).stream().toList());
            QueueSnapshot.Entry multi = s.entry(waitingMulti).orElseThrow();
            assertEquals("multi", multi.kind());
            assertFalse(multi.holding());
            assertEquals("exporter 2", multi.ownerThread());
            assertEquals("box-1", multi.ownerHost());
            assertEquals(77, multi.ownerPid());
            c.zooKeeper().delete(dir + "/" + waitingMulti, -1);
        }
        String firstMulti = createMulti(c, dir, "exporter 1");
        CompletableFuture<ZkLease> lockWaiter = mutex.acquireAsync();
        CompletableFuture<ZkLease> readWaiter = new ZkReadWriteLock(c, dir).readLock().acquireAsync();
        Await.until("three nodes queued", WAIT, () -> children(dir) == 3);
        QueueSnapshot s = Inspector.inspect(inspector, dir);
        assertEquals(List.of(true, false, false), s.entries().stream().map(QueueSnapshot.Entry::holding).toList());
        assertEquals(List.of("multi", "lock", "read"), s.entries().stream().map(QueueSnapshot.Entry::kind).toList());
        assertEquals(firstMulti, s.entries().get(0).nodeName());
        assertFalse(lockWaiter.isDone());
        assertFalse(readWaiter.isDone());
    }

    private static String createMulti(ZkClient c, String dir, String thread) throws Exception {
        byte[] data = ("host=box-1 pid=77 thread=" + thread + " requested=" + Instant.now() + " paths=" + dir + ",/other")
                .getBytes(StandardCharsets.UTF_8);
        String path = c.zooKeeper().create(dir + "/multi-" + "0".repeat(32) + "-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                CreateMode.EPHEMERAL_SEQUENTIAL);
        return nameOf(path);
    }

    /**
     * A node deleted between the queue read and the data read is left out, and the queue as it
     * stands then decides: the holder's node deleted makes the first waiter the holder.
     */
    @Test
    void nodeDeletedBetweenReads() throws Exception {
        String dir = "/inspect/vanishing";
        ZkClient c = client();
        ZkMutex mutex = new ZkMutex(c, dir);
        List<CompletableFuture<ZkLease>> leases = enqueue(dir, 3, 3, i -> mutex.acquireAsync());
        settled(dir, 3, leases, 1);
        String holder = leases.get(0).join().nodePath();
        QueueSnapshot s = Inspector.inspect(inspector, dir, () -> {
            try {
                c.zooKeeper().delete(holder, -1);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertEquals(2, s.entries().size());
        assertTrue(s.entry(nameOf(holder)).isEmpty());
        assertEquals(List.of(true, false), s.entries().stream().map(QueueSnapshot.Entry::holding).toList());
    }

    /** A directory that does not exist gives an empty snapshot that says it does not exist, in one request. */
    @Test
    void missingDirectory() throws Exception {
        QueueSnapshot s = Inspector.inspect(inspector, "/inspect/never/made");
        assertEquals("/inspect/never/made", s.path());
        assertEquals(List.of(), s.entries());
        assertFalse(s.exists(), "a missing directory is reported missing");
        assertTrue(s.isQueueDirectory());
        long cost = requests(() -> Inspector.inspect(inspector, "/inspect/never/made"));
        assertEquals(1, cost, "one getChildren");
    }

    /**
     * A parent of lock directories is no lock directory: its children are reported as not queue
     * nodes, it does not count as one; an existing empty directory exists and counts as one.
     */
    @Test
    void parentOfLockDirectories() throws Exception {
        ZkClient c = client();
        try (ZkLease a = new ZkMutex(c, "/inspect/parent/a").acquire();
                ZkLease b = new ZkMutex(c, "/inspect/parent/b").acquire()) {
            QueueSnapshot parent = Inspector.inspect(inspector, "/inspect/parent");
            assertTrue(parent.exists());
            assertFalse(parent.isQueueDirectory(), parent.toString());
            assertEquals(List.of("a", "b"), parent.notQueueNodes().stream().map(QueueSnapshot.Entry::nodeName).toList());
            assertTrue(parent.holders().isEmpty());

            QueueSnapshot lock = Inspector.inspect(inspector, "/inspect/parent/a");
            assertTrue(lock.exists());
            assertTrue(lock.isQueueDirectory());
            assertEquals(List.of(), lock.notQueueNodes());
        }
        c.zooKeeper().create("/inspect/empty", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        QueueSnapshot empty = Inspector.inspect(inspector, "/inspect/empty");
        assertTrue(empty.exists());
        assertTrue(empty.isQueueDirectory());
    }

    /**
     * Children no recipe made: a name not in the queue format is reported after the queue, kind
     * empty, sequence -1, never holding, and does not count; a queue-named node with foreign data
     * keeps its place in the queue with empty owner fields.
     */
    @Test
    void foreignNodes() throws Exception {
        String dir = "/inspect/foreign";
        ZkClient c = client();
        ZkMutex mutex = new ZkMutex(c, dir);
        try (ZkLease holder = mutex.acquire()) {
            c.zooKeeper().create(dir + "/notes", "hello".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
            c.zooKeeper().create(dir + "/a-lock-like-name", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            String odd = nameOf(c.zooKeeper().create(dir + "/lock-deadbeef-", new byte[] {(byte) 0xff, 0},
                    ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL));
            QueueSnapshot s = Inspector.inspect(inspector, dir);
            assertEquals(List.of(nameOf(holder.nodePath()), odd, "a-lock-like-name", "notes"),
                    s.entries().stream().map(QueueSnapshot.Entry::nodeName).toList());
            assertEquals(List.of(true, false, false, false), s.entries().stream().map(QueueSnapshot.Entry::holding).toList());
            assertTrue(s.isQueueDirectory(), "a lock directory with foreign children is still one");
            assertEquals(List.of("a-lock-like-name", "notes"),
                    s.notQueueNodes().stream().map(QueueSnapshot.Entry::nodeName).toList());
            QueueSnapshot.Entry oddEntry = s.entries().get(1);
            assertEquals("lock", oddEntry.kind());
            assertTrue(oddEntry.sequence() > 0);
            assertEquals(List.of("", -1L, ""), List.of(oddEntry.ownerHost(), oddEntry.ownerPid(), oddEntry.ownerThread()));
            QueueSnapshot.Entry notes = s.entries().get(3);
            assertEquals(List.of("", -1L, 0L), List.of(notes.kind(), notes.sequence(), notes.sessionId()));
            assertEquals(List.of("", -1L, ""), List.of(notes.ownerHost(), notes.ownerPid(), notes.ownerThread()));
            assertTrue(notes.fencingToken() > 0);
            c.zooKeeper().delete(dir + "/notes", -1);
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Starts {@code n} acquisitions: the first {@code inOrder} one at a time (each once the one
     * before has its node, so the head of the queue has a known order), the rest at once (their
     * creates may reach the server in any order).
     */
    private List<CompletableFuture<ZkLease>> enqueue(String dir, int n, int inOrder,
            IntFunction<CompletableFuture<ZkLease>> acquisition) {
        List<CompletableFuture<ZkLease>> leases = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            leases.add(acquisition.apply(i));
            if (i < inOrder) {
                int queued = i + 1;
                Await.until(WAIT, () -> children(dir) == queued, () -> "node " + queued + " in " + dir);
            }
        }
        return leases;
    }

    /**
     * Waits until {@code n} nodes are queued in {@code dir} and {@code granted} of the leases are
     * granted, then inspects.
     */
    private QueueSnapshot settled(String dir, int n, List<CompletableFuture<ZkLease>> leases, int granted)
            throws InterruptedException {
        Await.until(WAIT, () -> children(dir) == n, () -> n + " nodes in " + dir + ", have " + children(dir));
        Await.until(WAIT, () -> grantedNodes(leases).size() == granted,
                () -> granted + " granted in " + dir + ", have " + grantedNodes(leases).size());
        QueueSnapshot s = Inspector.inspect(inspector, dir);
        assertEquals(n, s.entries().size());
        assertEquals(dir, s.path());
        return s;
    }

    private void assertTwoRequests(String recipe, int n, String dir) {
        long cost = requests(() -> Inspector.inspect(inspector, dir));
        log.info("MEASURED inspect of a {} queue of {}: {} requests", recipe, n, cost);
        assertEquals(2, cost, "getChildren and one multi read");
    }

    @FunctionalInterface
    private interface Call {
        void run() throws Exception;
    }

    /**
     * @return the fewest requests the server received from the inspecting client's session for
     *     {@code call} in three tries: the {@code recved} count the four-letter {@code cons} reports
     *     for that session's connection (the other clients' waiters may still be busy meanwhile, so
     *     the server-wide {@code zk_packets_received} would count their work too)
     */
    private long requests(Call call) {
        long fewest = Long.MAX_VALUE;
        for (int t = 0; t < 3; t++) {
            long before = received(inspector.sessionId());
            try {
                call.run();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            fewest = Math.min(fewest, received(inspector.sessionId()) - before);
        }
        return fewest;
    }

    private static final Pattern CONS_LINE =
            Pattern.compile("recved=(\\d+).*?sid=0x([0-9a-fA-F]+)");

    /** @return what the server counts as received on the connection of session {@code sessionId} */
    private long received(long sessionId) {
        for (String line : flw.send("cons").split("\n")) {
            Matcher m = CONS_LINE.matcher(line);
            if (m.find() && Long.parseUnsignedLong(m.group(2), 16) == sessionId) {
                return Long.parseLong(m.group(1));
            }
        }
        throw new AssertionError("no connection of session 0x" + Long.toHexString(sessionId) + " in cons");
    }

    private static void assertOrdered(QueueSnapshot s) {
        for (int i = 1; i < s.entries().size(); i++) {
            assertTrue(s.entries().get(i - 1).sequence() < s.entries().get(i).sequence(), "queue order at " + i);
        }
    }

    private int children(String dir) {
        try {
            return inspector.zooKeeper().getChildren(dir, false).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static Set<String> grantedNodes(List<CompletableFuture<ZkLease>> leases) {
        Set<String> names = new TreeSet<>();
        for (CompletableFuture<ZkLease> f : leases) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                names.add(nameOf(f.join().nodePath()));
            }
        }
        return names;
    }

    private static Set<String> holdingNodes(QueueSnapshot s) {
        Set<String> names = new TreeSet<>();
        s.holders().forEach(e -> names.add(e.nodeName()));
        return names;
    }

    private static String nameOf(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
