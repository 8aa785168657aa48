package io.zkcoord.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/** {@link ZkTestEnsemble#expireSession}: the session really ends on the server. One ensemble for the class. */
@ZkEnsemble
class ExpireSessionTest {

    @Test
    void endsTheSessionOnTheServerAndTheClientBuildsItsNext(ZkTestEnsemble ensemble, ZkClient client,
            ZkClient observer) throws Exception {
        client.zooKeeper().create("/worker", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        ZkLease lease = new ZkMutex(client, "/locks/job").acquire();
        StateLog log = new StateLog();
        client.addConnectionListener(log);
        long before = client.sessionId();

        ensemble.expireSession(client);

        assertNull(observer.zooKeeper().exists("/worker", false), "the ephemeral node is gone");
        assertTrue(lease.whenLost().isDone(), "whenLost() completed");
        assertFalse(lease.isValid());
        assertTrue(log.saw(ConnectionState.LOST), "the client heard LOST: " + log.states());
        assertNotEquals(before, client.sessionId(), "a new session");
        assertTrue(client.state().isConnected(), "connected in its new session: " + client.state());
        // The next session works: the lock can be taken again, by the same client.
        ZkLease again = new ZkMutex(client, "/locks/job").tryAcquire(Duration.ofSeconds(10)).orElseThrow();
        assertTrue(again.fencingToken() > lease.fencingToken(), "a fencing token beyond the lost hold's");
        again.release();
    }

    @Test
    void theClientsOfOthersAreUntouched(ZkTestEnsemble ensemble, ZkClient victim, ZkClient bystander)
            throws Exception {
        long bystanderSession = bystander.sessionId();
        bystander.zooKeeper().create("/bystander", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);

        ensemble.expireSession(victim);

        assertEquals(bystanderSession, bystander.sessionId());
        assertTrue(bystander.zooKeeper().exists("/bystander", false) != null);
    }

    @Test
    void serverWatchCountSeesDataAndChildWatches(ZkTestEnsemble ensemble, ZkClient client) throws Exception {
        client.zooKeeper().create("/parent", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        long before = ensemble.serverWatchCount();
        client.zooKeeper().getChildren("/parent", event -> { });
        client.zooKeeper().exists("/parent/child", event -> { });
        assertEquals(before + 2, ensemble.serverWatchCount(), "a child watch and a data watch");
        client.zooKeeper().create("/parent/child", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Eventually.until(Duration.ofSeconds(10), () -> ensemble.serverWatchCount() == before,
                "both watches fired and left the server");
    }

    @Test
    void refusesAClientOfAnotherEnsemble(ZkTestEnsemble ensemble) {
        try (ZkClient direct = ZkClient.builder().connectString(ensemble.connectString()).build()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ensemble.expireSession(direct));
            assertTrue(e.getMessage().contains("not a client of this ensemble"), e.getMessage());
        }
    }
}
