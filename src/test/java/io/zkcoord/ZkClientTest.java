package io.zkcoord;

import static io.zkcoord.ConnectionState.CLOSED;
import static io.zkcoord.ConnectionState.CONNECTED;
import static io.zkcoord.ConnectionState.LOST;
import static io.zkcoord.ConnectionState.RECONNECTED;
import static io.zkcoord.ConnectionState.SUSPENDED;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ManualClock;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ZkClient} against a real in-process ZooKeeper server ({@link TestingServer}): connecting,
 * closing, and every {@link ConnectionState} transition, each produced the way it happens in
 * production (server stopped and restarted, session expired on the server, partition longer than
 * the session timeout).
 */
class ZkClientTest {

    /** Server tick: sessions are checked every tick, and the smallest session timeout is one tick. */
    private static final int TICK_MS = 100;
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final Pattern ZK_THREAD = Pattern.compile(".*(SendThread|EventThread|zkcoord-\\d+-).*");

    private TestingServer server;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        // maxSessionTimeout is 20 ticks by default; allow the 10 s sessions some tests need.
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MS, -1,
                Map.of("maxSessionTimeout", "30000"));
        server = new TestingServer(spec, true);
    }

    @AfterEach
    void stopEverything() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
        server.close();
    }

    private ZkClient.Builder builder() {
        return ZkClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(10))
                .connectionTimeout(WAIT);
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /** A raw ZooKeeper handle, connected, without authentication; closed after the test. */
    private ZooKeeper rawClient() throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(server.getConnectString(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        closeLater(zk);
        assertTrue(connected.await(WAIT.toSeconds(), TimeUnit.SECONDS), "raw client did not connect");
        return zk;
    }

    /** Records every state a listener is told, with the thread and the time it was told on. */
    private static final class Recorder implements ConnectionListener {
        final List<ConnectionState> states = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        final List<Long> nanos = new CopyOnWriteArrayList<>();

        @Override
        public void stateChanged(ConnectionState state) {
            nanos.add(System.nanoTime());
            threads.add(Thread.currentThread().getName());
            states.add(state);
        }

        /** Waits until exactly {@code expected} has been seen (and fails if anything else was). */
        void awaitExactly(ConnectionState... expected) {
            List<ConnectionState> want = List.of(expected);
            Await.until("states " + want, WAIT, () -> states.size() >= want.size());
            assertEquals(want, List.copyOf(states));
        }

        long nanosOf(ConnectionState state) {
            return nanos.get(states.indexOf(state));
        }
    }

    /** The client's name ("zkcoord-N"), which prefixes every thread it starts. */
    private static String nameOf(ZkClient client) {
        String s = client.toString();
        return s.substring(0, s.indexOf('['));
    }

    private static Set<Thread> liveThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                .collect(Collectors.toSet());
    }

    private static void assertValidPath(List<ConnectionState> seen) {
        ConnectionState previous = CONNECTED;
        for (ConnectionState next : seen) {
            boolean allowed = switch (next) {
                case SUSPENDED -> previous == CONNECTED || previous == RECONNECTED;
                case RECONNECTED -> previous == SUSPENDED || previous == LOST;
                case LOST -> previous == SUSPENDED;
                case CLOSED -> previous != CLOSED;
                case CONNECTING, CONNECTED -> false;
            };
            assertTrue(allowed, previous + " -> " + next + " in " + seen);
            previous = next;
        }
    }

    // ---------------------------------------------------------------- connect and close

    /** build() returns connected with a live session; close() ends it (ephemeral nodes go), is idempotent, and reports CLOSED once. */
    @Test
    void connectsAndCloses() throws Exception {
        ZkClient client = builder().build();
        String name = nameOf(client);
        assertEquals(CONNECTED, client.state());
        assertFalse(client.isClosed());
        long id = client.sessionId();
        assertNotEquals(0L, id);
        assertEquals(id, client.zooKeeper().getSessionId());
        assertEquals(ZooKeeper.States.CONNECTED, client.zooKeeper().getState());
        ZkSession session = client.session();
        assertTrue(session.isAlive());
        assertEquals(id, session.id());
        assertEquals(10_000, session.timeoutMillis());
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, client.acl());
        assertEquals(server.getConnectString(), client.connectString());
        client.zooKeeper().create("/connect-eph", new byte[0], client.acl(), CreateMode.EPHEMERAL);

        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);
        assertThrows(IllegalArgumentException.class, () -> client.addConnectionListener(null));

        client.close();
        assertEquals(CLOSED, client.state());
        assertTrue(client.isClosed());
        assertFalse(session.isAlive());
        assertEquals(List.of(CLOSED), recorder.states);

        client.close();
        assertEquals(List.of(CLOSED), recorder.states, "a second close() reports nothing");
        assertEquals(CLOSED, client.state());

        ZooKeeper raw = rawClient();
        assertNull(raw.exists("/connect-eph", false), "close() ends the session, so its ephemeral node goes");
        Await.until("every thread of " + name + " ends", WAIT, () -> liveThreads(name + "-").isEmpty());
    }

    /** After close(), zooKeeper(), sessionId(), session(), call() and addConnectionListener() throw IllegalStateException. */
    @Test
    void useAfterCloseFails() {
        ZkClient client = builder().build();
        client.close();
        assertThrows(IllegalStateException.class, client::zooKeeper);
        assertThrows(IllegalStateException.class, client::sessionId);
        assertThrows(IllegalStateException.class, client::session);
        assertThrows(IllegalStateException.class, () -> client.addConnectionListener(s -> { }));
        assertThrows(IllegalStateException.class, () -> client.call("/x", zk -> zk.exists("/x", false)));
        assertEquals(CLOSED, client.state());
    }

    /** build() with no server at the address throws CoordinationException after its connection timeout and leaves no thread behind. */
    @Test
    void buildWithoutServerFailsWithinConnectionTimeout() {
        int port = InstanceSpec.getRandomPort();
        String connect = "127.0.0.1:" + port;
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        Duration timeout = Duration.ofSeconds(1);
        long start = System.nanoTime();
        CoordinationException e = assertThrows(CoordinationException.class, () -> ZkClient.builder()
                .connectString(connect)
                .sessionTimeout(Duration.ofSeconds(2))
                .connectionTimeout(timeout)
                .build());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(timeout) >= 0, "gave up before the connection timeout: " + took);
        // Room for a busy machine: a build() that ignored its connection timeout retries the refused port for ever.
        assertTrue(took.compareTo(timeout.plusSeconds(6)) < 0, "took " + took);
        assertTrue(e.getMessage().contains(connect), e.getMessage());
        Await.until("no ZooKeeper or zkcoord thread of the failed attempt is alive", Duration.ofSeconds(5), () ->
                Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> !before.contains(t) && t.isAlive())
                        .noneMatch(t -> ZK_THREAD.matcher(t.getName()).matches()));
    }

    // ---------------------------------------------------------------- transitions

    /** Server stopped: SUSPENDED, session still alive; restarted within the session timeout: RECONNECTED, same session, its ephemeral node kept. */
    @Test
    void serverStopThenRestartIsSuspendedThenReconnectedToTheSameSession() throws Exception {
        ZkClient client = closeLater(builder().sessionTimeout(Duration.ofSeconds(10)).build());
        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);
        long id = client.sessionId();
        ZkSession session = client.session();
        ZooKeeper zk = client.zooKeeper();
        zk.create("/suspend-eph", new byte[0], client.acl(), CreateMode.EPHEMERAL);

        server.stop();
        recorder.awaitExactly(SUSPENDED);
        assertEquals(SUSPENDED, client.state());
        assertTrue(session.isAlive(), "SUSPENDED does not end the session");

        server.restart();
        recorder.awaitExactly(SUSPENDED, RECONNECTED);
        assertEquals(RECONNECTED, client.state());
        assertEquals(id, client.sessionId());
        assertSame(session, client.session());
        assertSame(zk, client.zooKeeper());
        assertTrue(session.isAlive());
        Stat stat = client.zooKeeper().exists("/suspend-eph", false);
        assertNotNull(stat, "the session survived, so its ephemeral node did");
        assertEquals(id, stat.getEphemeralOwner());
    }

    /** Session expired on the server: LOST, then RECONNECTED with a new session id on a new handle; the old session's ephemeral node is gone. */
    @Test
    void sessionExpiredOnServerIsLostThenReconnectedWithANewSession() throws Exception {
        ZkClient client = closeLater(builder().sessionTimeout(Duration.ofSeconds(10)).build());
        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);
        long oldId = client.sessionId();
        ZkSession oldSession = client.session();
        ZooKeeper oldZk = client.zooKeeper();
        oldZk.create("/expiry-eph", new byte[0], client.acl(), CreateMode.EPHEMERAL);

        SessionExpiry.expireOnServer(oldZk, server.getConnectString(), WAIT);

        Await.until("LOST then RECONNECTED", WAIT, () -> recorder.states.contains(LOST)
                && recorder.states.get(recorder.states.size() - 1) == RECONNECTED);
        List<ConnectionState> seen = List.copyOf(recorder.states);
        assertValidPath(seen);
        assertEquals(1, Collections.frequency(seen, LOST), seen.toString());
        assertEquals(List.of(LOST, RECONNECTED), seen.subList(seen.size() - 2, seen.size()));

        assertFalse(oldSession.isAlive());
        long newId = client.sessionId();
        assertNotEquals(oldId, newId);
        ZooKeeper newZk = client.zooKeeper();
        assertNotSame(oldZk, newZk);
        assertEquals(newId, newZk.getSessionId());
        assertEquals(newId, client.session().id());
        assertNull(newZk.exists("/expiry-eph", false), "the expired session's ephemeral node is gone");
        Await.until("the dead handle is closed", WAIT, () -> !oldZk.getState().isAlive());
        newZk.create("/expiry-eph", new byte[0], client.acl(), CreateMode.EPHEMERAL);
        assertEquals(newId, newZk.exists("/expiry-eph", false).getEphemeralOwner());
    }

    /** Partition longer than the session timeout (real clock, 1.5 s session): LOST by itself, no earlier than the timeout after the disconnection. */
    @Test
    void partitionLongerThanSessionTimeoutIsLostByItself() throws Exception {
        ZkClient client = closeLater(builder().sessionTimeout(Duration.ofMillis(1500)).build());
        ZkSession session = client.session();
        assertEquals(1500, session.timeoutMillis(), "the server must grant the short timeout");
        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);

        long stoppedAt = System.nanoTime();
        server.stop();
        recorder.awaitExactly(SUSPENDED, LOST);
        // The disconnection is seen after the stop, so LOST must come at least 1.5 s after it.
        long lostAfterNanos = recorder.nanosOf(LOST) - stoppedAt;
        assertTrue(lostAfterNanos >= TimeUnit.MILLISECONDS.toNanos(1500), "LOST only " + lostAfterNanos + " ns after the stop");
        assertTrue(lostAfterNanos < TimeUnit.MILLISECONDS.toNanos(1500 + 5_000), "LOST " + lostAfterNanos + " ns after the stop");
        assertEquals(LOST, client.state());
        assertFalse(session.isAlive(), "LOST ends the session");
        assertThrows(SessionLostException.class, () -> session.call("/x", zk -> zk.exists("/x", false)));
    }

    /** Partition with an injected clock: not LOST at timeout - 1 ms however often checked, LOST at the timeout, without waiting for real time. */
    @Test
    void partitionIsLostWhenTheInjectedClockPassesTheSessionTimeout() throws Exception {
        ManualClock clock = new ManualClock();
        ZkClient client = closeLater(builder().sessionTimeout(Duration.ofSeconds(20)).clock(clock).build());
        ZkSession session = client.session();
        int timeoutMs = session.timeoutMillis();
        assertEquals(20_000, timeoutMs);
        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);
        long realStart = System.nanoTime();

        server.stop();
        recorder.awaitExactly(SUSPENDED);
        clock.advance(Duration.ofMillis(timeoutMs - 1));
        long reads = clock.reads();
        Await.until("the loss check reads the advanced clock", WAIT, () -> clock.reads() >= reads + 3);
        assertEquals(List.of(SUSPENDED), recorder.states, "not LOST before the session timeout");
        assertTrue(session.isAlive());

        clock.advance(Duration.ofMillis(1));
        recorder.awaitExactly(SUSPENDED, LOST);
        assertFalse(session.isAlive());
        long realMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - realStart);
        assertTrue(realMs < timeoutMs, "waited " + realMs + " ms of real time");
    }

    /** Every transition reaches every listener once and in order, on one library thread (never ZooKeeper's), despite throwing listeners; session() waits out a LOST. */
    @Test
    void listenersSeeEveryTransitionInOrder() throws Exception {
        ManualClock clock = new ManualClock();
        ZkClient client = builder().sessionTimeout(Duration.ofSeconds(10)).clock(clock).build();
        Recorder first = new Recorder();
        Recorder last = new Recorder();
        AtomicInteger thrown = new AtomicInteger();
        client.addConnectionListener(state -> {
            first.stateChanged(state);
            thrown.incrementAndGet();
            throw new IllegalStateException("listener failure on " + state + " (expected by the test)");
        });
        client.addConnectionListener(state -> {
            thrown.incrementAndGet();
            throw new RuntimeException("another listener failure (expected by the test)");
        });
        client.addConnectionListener(last);
        long firstId = client.sessionId();
        int timeoutMs = client.session().timeoutMillis();

        server.stop();                                   // SUSPENDED
        last.awaitExactly(SUSPENDED);
        server.restart();                                // RECONNECTED, same session
        last.awaitExactly(SUSPENDED, RECONNECTED);
        assertEquals(firstId, client.sessionId());
        server.stop();                                   // SUSPENDED
        last.awaitExactly(SUSPENDED, RECONNECTED, SUSPENDED);
        clock.advance(Duration.ofMillis(timeoutMs));     // LOST (presumed)
        last.awaitExactly(SUSPENDED, RECONNECTED, SUSPENDED, LOST);
        CompletableFuture<ZkSession> next = CompletableFuture.supplyAsync(() -> {
            try {
                return client.session();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        server.restart();                                // RECONNECTED, new session
        last.awaitExactly(SUSPENDED, RECONNECTED, SUSPENDED, LOST, RECONNECTED);
        ZkSession newSession = next.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotEquals(firstId, newSession.id());
        assertEquals(newSession.id(), client.sessionId());
        client.close();                                  // CLOSED
        last.awaitExactly(SUSPENDED, RECONNECTED, SUSPENDED, LOST, RECONNECTED, CLOSED);

        assertEquals(last.states, first.states);
        assertEquals(12, thrown.get());
        Set<String> threads = Set.copyOf(last.threads);
        assertEquals(1, threads.size(), "one library thread: " + threads);
        String thread = threads.iterator().next();
        assertTrue(thread.startsWith(nameOf(client) + "-"), thread);
        assertFalse(thread.contains("EventThread") || thread.contains("SendThread"), thread);
        assertEquals(last.threads, first.threads);
    }

    /** A listener that closes the client from inside a callback: the other listeners still see CLOSED, after the current state. */
    @Test
    void closeFromAListenerStillReportsClosed() throws Exception {
        ZkClient client = builder().build();
        String name = nameOf(client);
        Recorder recorder = new Recorder();
        client.addConnectionListener(state -> {
            if (state == SUSPENDED) {
                client.close();
            }
        });
        client.addConnectionListener(recorder);

        server.stop();
        recorder.awaitExactly(SUSPENDED, CLOSED);
        assertEquals(CLOSED, client.state());
        Await.until("every thread of " + name + " ends", WAIT, () -> liveThreads(name + "-").isEmpty());
    }

    // ---------------------------------------------------------------- operations

    /** call() with fixedDelay(100 ms, 3) against a stopped server: 4 tries, CoordinationException naming the path with the KeeperException as cause, within seconds; works again after a restart. */
    @Test
    void callGivesUpAgainstAStoppedServerAndWorksAfterRestart() throws Exception {
        // A long session timeout, so the session is not presumed lost while the call runs.
        ZkClient client = closeLater(builder()
                .sessionTimeout(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(100), 3))
                .build());
        String path = "/retry-op";
        client.call(path, zk -> zk.create(path, "v1".getBytes(UTF_8), client.acl(), CreateMode.PERSISTENT));
        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);

        server.stop();
        recorder.awaitExactly(SUSPENDED);
        AtomicInteger tries = new AtomicInteger();
        long start = System.nanoTime();
        CoordinationException e = assertThrows(CoordinationException.class, () -> client.call(path, zk -> {
            tries.incrementAndGet();
            return zk.getData(path, false, null);
        }));
        // While disconnected, a request fails at the client's next failed connection attempt,
        // which comes 1 to 2 s after the previous one: 4 tries take up to about 4 * 2 s + 0.3 s.
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // Room for a busy machine beyond that, and short of the 30 s session timeout: a call that retried for
        // ever, or waited for the session to be presumed lost, fails.
        assertTrue(tookMs < 20_000, "gave up after " + tookMs + " ms");
        assertEquals(4, tries.get(), "one try and 3 retries");
        assertTrue(e.getCause() instanceof KeeperException.ConnectionLossException, String.valueOf(e.getCause()));
        assertTrue(e.getMessage().contains(path), e.getMessage());

        server.restart();
        recorder.awaitExactly(SUSPENDED, RECONNECTED);
        assertArrayEquals("v1".getBytes(UTF_8), client.call(path, zk -> zk.getData(path, false, null)));
    }

    /** call() is not tied to one session: a call made while the session expires completes on the client's new session. */
    @Test
    void callOutlivesASessionExpiry() throws Exception {
        ZkClient client = closeLater(builder()
                .sessionTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(50), 200))
                .build());
        String path = "/across-sessions";
        client.call(path, zk -> zk.create(path, "x".getBytes(UTF_8), client.acl(), CreateMode.PERSISTENT));
        long oldId = client.sessionId();
        List<KeeperException.Code> failures = new CopyOnWriteArrayList<>();

        SessionExpiry.expireOnServer(client.zooKeeper(), server.getConnectString(), WAIT);
        // The client has not noticed yet: the first try goes to the dead session's handle.
        byte[] data = client.call(path, zk -> {
            try {
                return zk.getData(path, false, null);
            } catch (KeeperException e) {
                failures.add(e.code());
                throw e;
            }
        });
        assertArrayEquals("x".getBytes(UTF_8), data);
        assertTrue(failures.stream().allMatch(c -> c == KeeperException.Code.SESSIONEXPIRED
                || c == KeeperException.Code.CONNECTIONLOSS), failures.toString());
        Await.until("the new session", WAIT, () -> client.state() == RECONNECTED);
        assertNotEquals(oldId, client.sessionId());
    }

    // ---------------------------------------------------------------- security

    /** With digest authorization nodes get CREATOR_ALL_ACL: an unauthenticated or wrongly authenticated client gets NoAuth; the new session after a loss keeps the authorization. */
    @Test
    void digestAuthorizationProtectsNodes() throws Exception {
        ZkClient client = closeLater(builder().authorization("digest", "user:pw".getBytes(UTF_8)).build());
        assertEquals(ZooDefs.Ids.CREATOR_ALL_ACL, client.acl());
        ZooKeeper zk = client.zooKeeper();
        zk.create("/secured", "s".getBytes(UTF_8), client.acl(), CreateMode.PERSISTENT);
        zk.create("/secured/child", "c".getBytes(UTF_8), client.acl(), CreateMode.PERSISTENT);
        Id owner = new Id("digest", DigestAuthenticationProvider.generateDigest("user:pw"));
        assertEquals(List.of(new ACL(ZooDefs.Perms.ALL, owner)), zk.getACL("/secured/child", new Stat()));

        ZooKeeper anonymous = rawClient();
        // Deleting a node needs DELETE on its parent, so /secured/child is the one to try.
        assertThrows(KeeperException.NoAuthException.class, () -> anonymous.delete("/secured/child", -1));
        assertThrows(KeeperException.NoAuthException.class, () -> anonymous.setData("/secured", new byte[0], -1));
        assertThrows(KeeperException.NoAuthException.class, () -> anonymous.getData("/secured", false, null));
        ZooKeeper wrong = rawClient();
        wrong.addAuthInfo("digest", "user:wrong".getBytes(UTF_8));
        assertThrows(KeeperException.NoAuthException.class, () -> wrong.delete("/secured/child", -1));
        assertNotNull(zk.exists("/secured/child", false));

        Recorder recorder = new Recorder();
        client.addConnectionListener(recorder);
        SessionExpiry.expireOnServer(zk, server.getConnectString(), WAIT);
        Await.until("RECONNECTED after LOST", WAIT, () -> recorder.states.contains(LOST)
                && recorder.states.get(recorder.states.size() - 1) == RECONNECTED);
        client.call("/secured/child", z -> {
            z.delete("/secured/child", -1);
            return null;
        });
        assertNull(client.zooKeeper().exists("/secured/child", false), "the new session is authorized too");
    }

    // ---------------------------------------------------------------- builder

    /** Every invalid builder argument fails at once with IllegalArgumentException. */
    @Test
    void builderRejectsInvalidArguments() {
        byte[] credentials = "user:pw".getBytes(UTF_8);
        List<Runnable> invalid = List.of(
                () -> ZkClient.builder().connectString(null),
                () -> ZkClient.builder().connectString(""),
                () -> ZkClient.builder().connectString("   "),
                () -> ZkClient.builder().sessionTimeout(null),
                () -> ZkClient.builder().sessionTimeout(Duration.ZERO),
                () -> ZkClient.builder().sessionTimeout(Duration.ofMillis(-1)),
                () -> ZkClient.builder().connectionTimeout(null),
                () -> ZkClient.builder().connectionTimeout(Duration.ZERO),
                () -> ZkClient.builder().connectionTimeout(Duration.ofSeconds(-5)),
                () -> ZkClient.builder().retryPolicy(null),
                () -> ZkClient.builder().acl(null),
                () -> ZkClient.builder().acl(List.of()),
                () -> ZkClient.builder().acl(Arrays.asList(ZooDefs.Ids.OPEN_ACL_UNSAFE.get(0), null)),
                () -> ZkClient.builder().clientConfig(null),
                () -> ZkClient.builder().clock(null),
                () -> ZkClient.builder().authorization(null, credentials),
                () -> ZkClient.builder().authorization("", credentials),
                () -> ZkClient.builder().authorization(" ", credentials),
                () -> ZkClient.builder().authorization("digest", null),
                () -> ZkClient.builder().build());
        for (int i = 0; i < invalid.size(); i++) {
            int n = i;
            assertThrows(IllegalArgumentException.class, invalid.get(i)::run, () -> "invalid argument #" + n);
        }
    }

    /** Valid settings are accepted, whatever kind of list the ACL is; an explicit ACL wins over the authorization default. */
    @Test
    void builderAcceptsValidSettings() throws Exception {
        List<ACL> readOnly = List.of(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE),
                new ACL(ZooDefs.Perms.ALL, new Id("auth", "")));
        ZkClient client = closeLater(builder()
                .acl(readOnly)
                .authorization("digest", "user:pw".getBytes(UTF_8))
                .clientConfig(new ZKClientConfig())
                .retryPolicy(RetryPolicy.none())
                .build());
        assertEquals(readOnly, client.acl());
        assertThrows(UnsupportedOperationException.class, () -> client.acl().add(readOnly.get(0)));
        assertEquals(RetryPolicy.none().toString(), client.retryPolicy().toString());
        client.zooKeeper().create("/acl-given", new byte[0], client.acl(), CreateMode.PERSISTENT);
        ZooKeeper anonymous = rawClient();
        assertNotNull(anonymous.getData("/acl-given", false, null));
        assertThrows(KeeperException.NoAuthException.class, () -> anonymous.setData("/acl-given", new byte[1], -1));
    }

    /** The default ACL follows the authorizations of each build(): a builder reused after adding one gives CREATOR_ALL_ACL; acl() cannot alter ZooDefs' lists. */
    @Test
    void defaultAclIsDecidedAtEachBuild() {
        ZkClient.Builder reused = builder();
        ZkClient open = closeLater(reused.build());
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, open.acl());
        assertThrows(UnsupportedOperationException.class, () -> open.acl().clear());
        ZkClient secured = closeLater(reused.authorization("digest", "user:pw".getBytes(UTF_8)).build());
        assertEquals(ZooDefs.Ids.CREATOR_ALL_ACL, secured.acl());
        assertThrows(UnsupportedOperationException.class, () -> secured.acl().clear());
        assertEquals(1, ZooDefs.Ids.OPEN_ACL_UNSAFE.size());
        assertEquals(1, ZooDefs.Ids.CREATOR_ALL_ACL.size());
    }
}
