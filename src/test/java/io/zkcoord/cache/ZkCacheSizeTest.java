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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Promise 5: a node whose {@code getChildren} reply is over the default 1 MB {@code jute.maxbuffer}
 * loads, with the client's {@code jute.maxbuffer} raised for that one reply. The default build
 * does it with 20,000 children of 60-character names (a reply of about 1.3 MB, as 100,000 short
 * names make); the soak does it with 100,000 children (Curator's caches stopped at 64k).
 */
@Timeout(300)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheSizeTest {

    /** Children whose names alone make the listing about 1.3 MB: 4 bytes of length and 60 of name each. */
    @Test
    void childrenListedInMoreThanOneMegabyteLoad() throws Exception {
        int children = 20_000;
        assertTrue(children * (4 + name(0, 60).length()) > 1024 * 1024, "the listing is over 1 MB");
        load(children, 60);
    }

    /** Soak: 100,000 children (Curator's caches stopped at 64k). */
    @Tag("soak")
    @Test
    void hundredThousandChildrenLoad() throws Exception {
        load(100_000, 7);
    }

    /** @return child {@code i}'s name, {@code length} characters long (at least 7) */
    private static String name(int i, int length) {
        return "c" + "x".repeat(length - 7) + String.format("%06d", i);
    }

    private static void load(int children, int nameLength) throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            ZKClientConfig big = new ZKClientConfig();
            big.setProperty("jute.maxbuffer", Integer.toString(8 * 1024 * 1024));
            try (ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                    .sessionTimeout(Duration.ofSeconds(30)).clientConfig(big).build()) {
                ZooKeeper zk = client.zooKeeper();
                zk.create("/big", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                List<Op> ops = new ArrayList<>();
                for (int i = 0; i < children; i++) {
                    ops.add(Op.create("/big/" + name(i, nameLength), new byte[] {(byte) i}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.PERSISTENT));
                    if (ops.size() == 2_000) {
                        zk.multi(ops);
                        ops.clear();
                    }
                }
                if (!ops.isEmpty()) {
                    zk.multi(ops);
                }
                try (ZkCache cache = new ZkCache(client, "/big")) {
                    cache.start();
                    assertTrue(cache.awaitInitialized(Duration.ofSeconds(240)), "loaded");
                    assertEquals(children + 1, cache.size());
                    assertEquals(children, cache.children("/big").size());
                    int last = children - 1;
                    assertEquals((byte) last, cache.get("/big/" + name(last, nameLength)).orElseThrow().data()[0]);
                    assertEquals(children, cache.get("/big").orElseThrow().stat().getNumChildren());
                }
            }
        }
    }
}
