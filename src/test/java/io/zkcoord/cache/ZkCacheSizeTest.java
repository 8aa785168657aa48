package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Promise 5: a node with 100,000 children loads (Curator's caches stopped at 64k), with the
 * client's {@code jute.maxbuffer} raised for the one {@code getChildren} reply that lists them all
 * (about 1.2 MB here, over the default 1 MB).
 */
@Timeout(300)
class ZkCacheSizeTest {

    private static final int CHILDREN = 100_000;

    @Test
    void hundredThousandChildrenLoad() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            ZKClientConfig big = new ZKClientConfig();
            big.setProperty("jute.maxbuffer", Integer.toString(8 * 1024 * 1024));
            try (ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                    .sessionTimeout(Duration.ofSeconds(30)).clientConfig(big).build()) {
                ZooKeeper zk = client.zooKeeper();
                zk.create("/big", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                List<Op> ops = new ArrayList<>();
                for (int i = 0; i < CHILDREN; i++) {
                    ops.add(Op.create(String.format("/big/c%06d", i), new byte[] {(byte) i}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.PERSISTENT));
                    if (ops.size() == 2_000) {
                        zk.multi(ops);
                        ops.clear();
                    }
                }
                try (ZkCache cache = new ZkCache(client, "/big")) {
                    cache.start();
                    assertTrue(cache.awaitInitialized(Duration.ofSeconds(240)), "loaded");
                    assertEquals(CHILDREN + 1, cache.size());
                    assertEquals(CHILDREN, cache.children("/big").size());
                    assertEquals((byte) 99_999, cache.get("/big/c099999").orElseThrow().data()[0]);
                    assertEquals(CHILDREN, cache.get("/big").orElseThrow().stat().getNumChildren());
                }
            }
        }
    }
}
