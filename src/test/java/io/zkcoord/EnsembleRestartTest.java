package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The whole ensemble restarts after the client presumed its session lost: the restarted server
 * restores that session from its data, with a fresh timeout. Its nodes must not block the
 * client's new session (nor anyone else) for that timeout: the client ends the old session on
 * the ensemble as soon as it is reachable again.
 */
class EnsembleRestartTest {

    private static final Duration SESSION = Duration.ofSeconds(15);
    /**
     * Well below the restored session's 15 s timeout (which is what the old nodes blocked for),
     * and a generous multiple of what reconnecting takes (ZooKeeper's client retries about once a
     * second).
     */
    private static final Duration WITHIN = Duration.ofSeconds(8);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private TestingServer server;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 100, -1,
                Map.of("maxSessionTimeout", "30000")), true);
    }

    @AfterEach
    void stopEverything() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
        server.close();
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /**
     * Curator's leader-latch "lost connection" case, ported: a leader and a lock holder presume
     * their session lost while the server is down; the server comes back on the same data; a
     * leader and a new lock holder come well before the restored session's timeout, and none of
     * the old session's nodes is left.
     */
    @Test
    void aSessionPresumedLostStopsBlockingOnceTheEnsembleIsBack() throws Exception {
        ManualClock clock = new ManualClock();
        ZkClient client = closeLater(ZkClient.builder().connectString(server.getConnectString())
                .sessionTimeout(SESSION).connectionTimeout(WAIT).clock(clock).build());
        List<ZkLeaderElection> elections = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ZkLeaderElection e = closeLater(new ZkLeaderElection(client, "/restart/election", "p" + i));
            e.start();
            elections.add(e);
        }
        Await.until("a leader", WAIT, () -> elections.stream().anyMatch(ZkLeaderElection::isLeader));
        ZkLease lease = new ZkMutex(client, "/restart/lock").acquire();
        long oldSession = client.sessionId();
        ZooKeeper oldHandle = client.zooKeeper();

        server.stop();
        Await.until("SUSPENDED", WAIT, () -> client.state() == ConnectionState.SUSPENDED);
        clock.advance(SESSION.plusSeconds(1));
        Await.until("LOST, presumed by the client", WAIT, () -> !lease.isValid());
        // As when the ensemble stays down for longer than the session timeout: the given-up handle
        // has stopped (its close-session request failed), so it cannot end the session itself.
        Await.until("the given-up handle has stopped", WAIT, () -> !oldHandle.getState().isAlive());

        server.restart();
        long restarted = System.nanoTime();
        try (ZkClient other = ZkClient.builder().connectString(server.getConnectString())
                .connectionTimeout(WAIT).build()) {
            ZooKeeper zk = other.zooKeeper();
            Await.until(WITHIN, () -> ownedBy(zk, "/restart/election", oldSession) == 0
                    && ownedBy(zk, "/restart/lock", oldSession) == 0,
                    () -> "the old session's nodes are still there: election " + ownedBy(zk, "/restart/election", oldSession)
                            + ", lock " + ownedBy(zk, "/restart/lock", oldSession));
            long left = WITHIN.toNanos() - (System.nanoTime() - restarted);
            assertTrue(new ZkMutex(other, "/restart/lock").tryLock(Math.max(0, left), TimeUnit.NANOSECONDS),
                    "another client cannot take the lock within " + WITHIN.toMillis() + " ms of the restart");
            Await.until("a leader", Duration.ofNanos(Math.max(0, WITHIN.toNanos() - (System.nanoTime() - restarted))),
                    () -> elections.stream().anyMatch(ZkLeaderElection::isLeader));
        }
        assertNotEquals(oldSession, client.sessionId());
    }

    private static int ownedBy(ZooKeeper zk, String dir, long session) {
        try {
            int n = 0;
            for (String child : zk.getChildren(dir, false)) {
                Stat stat = zk.exists(dir + "/" + child, false);
                if (stat != null && stat.getEphemeralOwner() == session) {
                    n++;
                }
            }
            return n;
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (KeeperException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
