package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SilentServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ZkClient.Builder#start()}: a client built while its ensemble is down returns at once in
 * {@link ConnectionState#CONNECTING}, connects when a server comes up (on the port the connect
 * string names), and everything started before that waits for the first session under its own
 * time limit.
 */
class StartBeforeEnsembleTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /**
     * What a call that must not wait for the ensemble (start(), a timed wait of 500 ms) may take: room for a busy
     * machine. A wrong answer waits for the session, which never comes while no server runs: such a call blocks
     * for as long as the test lets it, far past this.
     */
    private static final Duration PROMPT = Duration.ofSeconds(10);
    /**
     * What close() while connecting may take: room for a busy machine, and short of what a wrong answer takes (a
     * close that waits for the connection attempt waits out the session timeout, 10 s by default, 30 s with the
     * silent server).
     */
    private static final Duration CLOSE_BOUND = Duration.ofSeconds(5);
    private static final Pattern CLIENT_THREAD = Pattern.compile(".*(SendThread|EventThread|zkcoord-\\d+-).*");

    private final int port = InstanceSpec.getRandomPort();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeEverything() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    private ZkClient startClient() {
        return closeLater(ZkClient.builder()
                .connectString("127.0.0.1:" + port)
                .sessionTimeout(Duration.ofSeconds(10))
                .start());
    }

    /** The server the client's connect string names, started now. */
    private TestingServer startServer() throws Exception {
        return closeLater(new TestingServer(port, true));
    }

    /** start() returns at once, CONNECTING (not connected, no session id); listeners hear exactly CONNECTED once a server comes up. */
    @Test
    void startsConnectingAndConnectsWhenTheEnsembleComesUp() throws Exception {
        long before = System.nanoTime();
        ZkClient client = startClient();
        Duration took = Duration.ofNanos(System.nanoTime() - before);
        assertTrue(took.compareTo(PROMPT) < 0, "start() did not return at once: " + took);
        List<ConnectionState> seen = new CopyOnWriteArrayList<>();
        client.addConnectionListener(seen::add);
        assertEquals(ConnectionState.CONNECTING, client.state());
        assertFalse(client.state().isConnected());
        assertFalse(client.isClosed());
        assertEquals(0, client.sessionId());
        assertEquals(Optional.empty(), client.session(Duration.ZERO));

        startServer();
        Optional<ZkSession> session = client.session(WAIT);
        assertTrue(session.isPresent(), "no session once the server is up");
        Await.until("CONNECTED reported", WAIT, () -> !seen.isEmpty());
        assertEquals(List.of(ConnectionState.CONNECTED), List.copyOf(seen));
        assertEquals(ConnectionState.CONNECTED, client.state());
        assertEquals(session.get().id(), client.sessionId());
        assertTrue(client.zooKeeper().exists("/", false) != null);
    }

    /** session(maxWait) while CONNECTING waits its whole maxWait and returns empty; tryLock(t) returns false by its deadline. */
    @Test
    void timedWaitsEndByTheirDeadlinesWhileConnecting() throws Exception {
        ZkClient client = startClient();
        Duration maxWait = Duration.ofMillis(500);
        long start = System.nanoTime();
        assertEquals(Optional.empty(), client.session(maxWait));
        assertTrue(System.nanoTime() - start >= maxWait.toNanos(), "returned before maxWait");

        ZkMutex mutex = new ZkMutex(client, "/start/timed");
        start = System.nanoTime();
        assertFalse(mutex.tryLock(500, TimeUnit.MILLISECONDS), "tryLock held without a session");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(Duration.ofMillis(500)) >= 0, "gave up early: " + took);
        assertTrue(took.compareTo(PROMPT) < 0, "overran its deadline: " + took);
        assertEquals(ConnectionState.CONNECTING, client.state());
    }

    /** lock(), a semaphore acquire and an election started before the ensemble all hold once it is up. */
    @Test
    void recipesStartedBeforeTheEnsembleHoldOnceItIsUp() throws Exception {
        ZkClient client = startClient();
        ZkMutex mutex = new ZkMutex(client, "/start/mutex");
        CompletableFuture<Long> locked = CompletableFuture.supplyAsync(() -> {
            mutex.lock();
            try {
                return mutex.fencingToken();
            } finally {
                mutex.unlock();
            }
        });
        ZkSemaphore semaphore = new ZkSemaphore(client, "/start/semaphore", 1);
        CompletableFuture<ZkLease> permit = semaphore.acquireAsync();
        ZkLeaderElection election = closeLater(new ZkLeaderElection(client, "/start/election", "p1"));
        election.start();
        assertFalse(locked.isDone() || permit.isDone() || election.isLeader(), "something held without a session");

        startServer();
        assertTrue(locked.get(WAIT.toMillis(), TimeUnit.MILLISECONDS) > 0, "lock() did not hold");
        try (ZkLease lease = permit.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertTrue(lease.isValid());
        }
        assertTrue(election.awaitLeadership(WAIT), "the election has no leader");
    }

    /** close() while CONNECTING returns promptly, fails what waits for a session, and leaves no thread of the client. */
    @Test
    void closeWhileConnectingIsPromptAndLeavesNoThread() throws Exception {
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        ZkClient client = ZkClient.builder().connectString("127.0.0.1:" + port).start();
        CompletableFuture<ZkLease> pending = new ZkMutex(client, "/start/close").acquireAsync();
        long start = System.nanoTime();
        client.close();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(CLOSE_BOUND) < 0, "close() took " + took);
        assertEquals(ConnectionState.CLOSED, client.state());
        Await.until("the pending acquisition fails", WAIT, pending::isDone);
        assertTrue(pending.isCompletedExceptionally());
        assertThrows(IllegalStateException.class, () -> client.session(Duration.ofSeconds(1)));
        Await.until(WAIT, () -> liveClientThreads(before).isEmpty(),
                () -> "threads left: " + liveClientThreads(before));
    }

    /** close() while connecting to a server that accepts TCP and never answers: prompt, and no thread is left waiting for the attempt. */
    @Test
    void closeWhileConnectingToASilentServerLeavesNoThread() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
            ZkClient client = ZkClient.builder().connectString(silent.connectString())
                    .sessionTimeout(Duration.ofSeconds(30)).start();
            Await.until("the client reached the silent server", WAIT, () -> silent.accepted() > 0);
            long start = System.nanoTime();
            client.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(CLOSE_BOUND) < 0, "close() took " + took);
            // Before, the handle's close waited for the connection attempt: up to the 30 s session timeout.
            Await.until(Duration.ofSeconds(5), () -> liveClientThreads(before).isEmpty(),
                    () -> "threads left: " + liveClientThreads(before));
        }
    }

    private static Set<String> liveClientThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t) && t.isAlive() && CLIENT_THREAD.matcher(t.getName()).matches())
                .map(Thread::getName)
                .collect(Collectors.toSet());
    }
}
