package io.zkcoord.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/**
 * {@link ZkTestEnsemble#partition}, {@link ZkTestEnsemble#disconnect} and {@link ZkTestEnsemble#cutConnection}
 * as a user sees them through {@code ZkClient}.
 */
@ZkEnsemble
class PartitionTest {

    /**
     * Short, so that the partition runs to LOST in a few seconds; long enough to leave a time-limited call room for
     * a busy machine: it must return within the session timeout, which a call that waited for the session's end
     * (LOST comes no sooner than a session timeout after the client noticed the silence) cannot.
     */
    private static final Duration SESSION = Duration.ofSeconds(4);

    @Test
    void aPartitionIsSilentThenSuspendedThenLostAndTimeLimitsAreKept(ZkTestEnsemble ensemble, ZkClient other)
            throws Exception {
        try (ZkClient client = ensemble.clientBuilder().sessionTimeout(SESSION).build()) {
            ZkLease lease = new ZkMutex(client, "/locks/p").acquire();
            client.zooKeeper().create("/holder", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            StateLog log = new StateLog();
            client.addConnectionListener(log);

            try (Fault partition = ensemble.partition(client)) {
                // Silent: a request is neither answered nor refused while the partition lasts.
                CompletableFuture<Object> write = new CompletableFuture<>();
                client.zooKeeper().setData("/holder", new byte[] {1}, -1,
                        (rc, path, ctx, stat) -> write.complete(rc), null);
                // A call with a time limit keeps it: a try for a lock that cannot be had returns empty.
                long start = System.nanoTime();
                Optional<ZkLease> second = new ZkMutex(client, "/locks/q").tryAcquire(Duration.ofMillis(500));
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(second.isEmpty(), "nothing can be acquired across a partition");
                assertTrue(tookMillis < SESSION.toMillis(), "tryAcquire(500 ms) returned after " + tookMillis + " ms");

                Eventually.until(Duration.ofSeconds(30), () -> log.saw(ConnectionState.LOST),
                        "LOST after the session timeout: " + log.states());
                int suspended = log.indexOf(ConnectionState.SUSPENDED, 0);
                int lost = log.indexOf(ConnectionState.LOST, 0);
                assertTrue(suspended >= 0 && suspended < lost, "SUSPENDED, then LOST: " + log.states());
                assertTrue(lease.whenLost().isDone(), "the hold is reported lost");
                assertFalse(write.isDone() && Integer.valueOf(0).equals(write.getNow(null)),
                        "no write went through the partition");
                // Meanwhile the ensemble expired the session: its ephemeral node went, for everyone else.
                Eventually.until(Duration.ofSeconds(30), () -> exists(other, "/holder") == null,
                        "the partitioned client's ephemeral node expires on the server");
            }
            // Healed: the client builds its next session.
            Eventually.until(Duration.ofSeconds(30), () -> client.state().isConnected(),
                    "connected again after the heal: " + log.states());
            assertNotNull(client.zooKeeper().exists("/", false));
        }
    }

    @Test
    void aHealBeforeTheSessionExpiresKeepsTheSession(ZkTestEnsemble ensemble, ZkClient client) throws Exception {
        long session = client.sessionId();
        CompletableFuture<Integer> write = new CompletableFuture<>();
        try (Fault partition = ensemble.partition(client)) {
            client.zooKeeper().create("/during", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT,
                    (rc, path, ctx, name) -> write.complete(rc), null);
            Thread.sleep(300); // the window under test: nothing may answer the held request during it
            assertFalse(write.isDone(), "held, neither answered nor refused, while the partition lasts");
        }
        assertEquals(0, write.get(30, TimeUnit.SECONDS), "the held write went through once healed");
        assertEquals(session, client.sessionId(), "same session");
        assertNotNull(client.zooKeeper().exists("/during", false));
    }

    @Test
    void aDisconnectIsSeenAtOnceAndHealsIntoTheSameSession(ZkTestEnsemble ensemble, ZkClient client)
            throws Exception {
        StateLog log = new StateLog();
        client.addConnectionListener(log);
        long session = client.sessionId();
        try (Fault disconnect = ensemble.disconnect(client)) {
            Eventually.until(Duration.ofSeconds(10), () -> log.saw(ConnectionState.SUSPENDED),
                    "SUSPENDED once the connection is refused: " + log.states());
        }
        Eventually.until(Duration.ofSeconds(30), () -> log.saw(ConnectionState.RECONNECTED),
                "RECONNECTED after the heal: " + log.states());
        assertEquals(session, client.sessionId());
    }

    @Test
    void aCutConnectionKeepsTheSession(ZkTestEnsemble ensemble, ZkClient client) throws Exception {
        client.zooKeeper().create("/kept", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        StateLog log = new StateLog();
        client.addConnectionListener(log);
        long session = client.sessionId();

        ensemble.cutConnection(client);

        Eventually.until(Duration.ofSeconds(30), () -> log.saw(ConnectionState.RECONNECTED),
                "RECONNECTED after the cut: " + log.states());
        assertTrue(log.indexOf(ConnectionState.SUSPENDED, 0) >= 0, "SUSPENDED first: " + log.states());
        assertFalse(log.saw(ConnectionState.LOST), "never LOST: " + log.states());
        assertEquals(session, client.sessionId());
        assertNotNull(client.zooKeeper().exists("/kept", false), "the ephemeral node survived");
    }

    @Test
    void aFaultTouchesOnlyItsClient(ZkTestEnsemble ensemble, ZkClient cut, ZkClient bystander) throws Exception {
        long before = bystander.sessionId();
        try (Fault f = ensemble.disconnect(cut)) {
            bystander.zooKeeper().create("/bystander-writes", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
        }
        assertEquals(before, bystander.sessionId());
        assertNotEquals(ConnectionState.LOST, bystander.state());
    }

    private static Object exists(ZkClient client, String path) {
        try {
            return client.zooKeeper().exists(path, false);
        } catch (Exception e) {
            return e; // not an answer: keep waiting
        }
    }
}
