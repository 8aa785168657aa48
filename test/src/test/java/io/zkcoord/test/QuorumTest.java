package io.zkcoord.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/** A 3-server ensemble: stopping a minority, restarting, finding the leader, counting watches. */
@ZkEnsemble(servers = 3)
class QuorumTest {

    @Test
    void survivesTheStopOfAMinorityAndLeaderIsRightAfterARestart(ZkTestEnsemble ensemble, ZkClient client)
            throws Exception {
        int first = ensemble.leader();
        assertEquals("leader", modeOf(ensemble, first));

        ensemble.stopServer(first);
        int second = ensemble.leader();
        assertNotEquals(first, second, "a new leader among the two left");
        assertEquals("leader", modeOf(ensemble, second));
        // The client carries on (its retry policy rides out the election), and so do the recipes.
        ZkLease lease = new ZkMutex(client, "/locks/quorum").tryAcquire(Duration.ofSeconds(30)).orElseThrow();
        client.call("/written", zk -> zk.create("/written", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                CreateMode.PERSISTENT));
        lease.release();

        ensemble.restartServer(first);
        int now = ensemble.leader();
        assertEquals("leader", modeOf(ensemble, now), "leader() names the leader right after a restart");
        assertEquals("follower", modeOf(ensemble, first), "the restarted server joined as a follower");

        // Every server has the data, the restarted one included.
        try (ZkClient direct = ZkClient.builder().connectString(address(ensemble, first)).build()) {
            direct.zooKeeper().sync("/", (rc, path, ctx) -> { }, null);
            assertNotNull(direct.call("/written", zk -> zk.exists("/written", false)));
        }
    }

    @Test
    void serverWatchCountCountsTheWatchesTheServersHold(ZkTestEnsemble ensemble, ZkClient client)
            throws Exception {
        long before = ensemble.serverWatchCount();
        client.zooKeeper().exists("/watched", event -> { });
        assertEquals(before + 1, ensemble.serverWatchCount());
        client.zooKeeper().create("/watched", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Eventually.until(Duration.ofSeconds(10), () -> ensemble.serverWatchCount() == before,
                "the fired watch leaves the server");
    }

    @Test
    void refusesAServerItDoesNotHave(ZkTestEnsemble ensemble) {
        assertThrows(IllegalArgumentException.class, () -> ensemble.stopServer(3));
        assertThrows(IllegalArgumentException.class, () -> ensemble.restartServer(-1));
    }

    private static String modeOf(ZkTestEnsemble ensemble, int index) {
        return FourLetterWords.of(address(ensemble, index)).mode();
    }

    private static String address(ZkTestEnsemble ensemble, int index) {
        return ensemble.connectString().split(",")[index];
    }
}
