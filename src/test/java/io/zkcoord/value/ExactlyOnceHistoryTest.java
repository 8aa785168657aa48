package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.ZkProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The history checker of exactly once (final counter = acknowledged additions + a subset of the
 * unknown ones), shown failing on a naive retrying increment whose replies the proxy cuts. The
 * deterministic lost-reply cases of ZkAtomicLong itself are in {@link ZkAtomicLongTest}.
 */
@Timeout(180)
class ExactlyOnceHistoryTest {

    /** A naive increment (read, conditional write, on connection loss read and add again) counts a cut write twice: the checker says so. */
    @Test
    void checkerFailsTheNaiveRetryingIncrement() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient c = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(15)).build();
             ZkClient reader = ZkClient.builder().connectString(server.getConnectString()).build()) {
            new ZkAtomicLong(reader, "/history/naive").set(0);
            CounterHistory history = new CounterHistory();
            for (int i = 0; i < 5; i++) {
                CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
                naiveAdd(c, "/history/naive", 10);
                history.acknowledged(10);
                assertTrue(cut.isDone());
            }
            long end = new ZkAtomicLong(reader, "/history/naive").get();
            assertEquals(100, end, "each cut write was applied, then applied again by the retry");
            assertNotNull(history.check(0, end), "the checker must reject a double count");
        }
    }

    /** Read, write guarded by the version (as a multi, so that the proxy can cut it), retry all on connection loss. */
    private static void naiveAdd(ZkClient c, String path, long delta) throws Exception {
        for (;;) {
            ZooKeeper zk = c.zooKeeper();
            try {
                Stat stat = new Stat();
                long v = ByteBuffer.wrap(zk.getData(path, false, stat)).getLong();
                zk.multi(List.of(Op.setData(path, ByteBuffer.allocate(8).putLong(v + delta).array(), stat.getVersion())));
                return;
            } catch (KeeperException.ConnectionLossException e) {
                // retry the whole increment: the bug
            } catch (KeeperException.BadVersionException e) {
                // contention: retry
            }
        }
    }
}
