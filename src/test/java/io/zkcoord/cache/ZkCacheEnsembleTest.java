package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.cache.EventLog.NodeFacts;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Promise 1 across a leader change in a 3-server ensemble (the case of Curator's
 * TestCuratorCacheEdges.testServerLoss, written for this API): the leader is killed while nodes are
 * made, changed, deleted and made again; once a new leader serves, the cache and its replayed events
 * equal the tree.
 */
@Timeout(180)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheEnsembleTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void leaderKilledWhileTheTreeChanges() throws Exception {
        try (TestingCluster cluster = FaultFixtures.cluster(3, 500)) {
            cluster.start();
            FaultFixtures.awaitQuorum(cluster, List.copyOf(cluster.getInstances()), WAIT);
            try (ZkClient writer = FaultFixtures.client(cluster.getConnectString(), Duration.ofSeconds(10));
                    ZkClient watched = FaultFixtures.client(cluster.getConnectString(), Duration.ofSeconds(10));
                    ZkCache cache = new ZkCache(watched, "/test")) {
                ZooKeeper zk = writer.zooKeeper();
                writer.call("/test", z -> z.create("/test", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
                EventLog log = new EventLog();
                cache.addListener(log);
                cache.start();
                assertTrue(cache.awaitInitialized(WAIT));
                for (String name : List.of("one", "two", "three")) {
                    writer.call("/test/" + name, z -> z.create("/test/" + name, new byte[] {1}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.PERSISTENT));
                }
                Await.until("three children cached", WAIT, () -> cache.size() == 4);

                InstanceSpec leader = FaultFixtures.leader(cluster).orElseThrow();
                cluster.killServer(leader);
                List<InstanceSpec> rest = cluster.getInstances().stream().filter(s -> !s.equals(leader)).toList();
                FaultFixtures.awaitQuorum(cluster, rest, WAIT);
                writer.call("/test/two", z -> {
                    z.delete("/test/two", -1);
                    return null;
                });
                writer.call("/test/two", z -> z.create("/test/two", new byte[] {1}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT));
                writer.call("/test/one", z -> z.setData("/test/one", new byte[] {2}, -1));
                writer.call("/test/four", z -> z.create("/test/four", new byte[] {4}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT));

                Await.until(WAIT, () -> {
                    try {
                        Map<String, NodeFacts> tree = TreeRead.read(zk, "/test", Integer.MAX_VALUE, true);
                        return tree.equals(TreeRead.of(cache)) && tree.equals(new TreeMap<>(log.replay("/test")));
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }, () -> "cache " + TreeRead.of(cache) + " events " + log.replay("/test"));
                assertEquals(5, cache.stream().count());
                assertEquals(List.of(), log.violations());
            }
        }
    }
}
