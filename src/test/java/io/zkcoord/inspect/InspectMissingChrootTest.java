package io.zkcoord.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A read-only client ({@code createChroot(false)}, as {@code zkcoord inspect} builds it) leaves a
 * missing chroot missing: the Inspector reads the path under it as missing, and nothing appears on
 * the ensemble. A chroot that exists reads as usual.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InspectMissingChrootTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static TestingServer server;
    /** No chroot: sees the whole tree. */
    private static ZkClient direct;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
        direct = ZkClient.builder().connectString(server.getConnectString()).connectionTimeout(WAIT).build();
    }

    @AfterAll
    static void stop() throws Exception {
        direct.close();
        server.close();
    }

    private static ZkClient readOnly(String chroot) {
        return ZkClient.builder().connectString(server.getConnectString() + chroot).createChroot(false)
                .connectionTimeout(WAIT).build();
    }

    @Test
    void aMissingChrootIsReportedMissingAndNotCreated() throws Exception {
        try (ZkClient client = readOnly("/nope/deeper")) {
            assertEquals(ConnectionState.CONNECTED, client.state());
            QueueSnapshot snapshot = Inspector.inspect(client, "/locks/nightly-export");
            assertFalse(snapshot.exists(), "a path under a missing chroot must read as missing");
            assertTrue(snapshot.entries().isEmpty());
            assertEquals(0, Inspector.group(client, "/locks/nightly-export").size());
            assertEquals(0, Inspector.shards(client, "/locks/nightly-export").shards());
        }
        assertNull(direct.zooKeeper().exists("/nope", false), "inspecting created the chroot's parent");
        assertNull(direct.zooKeeper().exists("/nope/deeper", false), "inspecting created the chroot");
    }

    /** A recipe on such a client cannot create its directory: it fails naming the chroot, and creates nothing. */
    @Test
    void aRecipeOnAReadOnlyClientFailsNamingTheMissingChroot() throws Exception {
        try (ZkClient client = readOnly("/absent")) {
            ZkMutex mutex = new ZkMutex(client, "/locks/a");
            CoordinationException e = assertThrows(CoordinationException.class, () -> mutex.tryLock(5, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains("/absent"), e.getMessage());
        }
        assertNull(direct.zooKeeper().exists("/absent", false), "the chroot was created");
    }

    @Test
    void aChrootThatExistsReadsAsUsual() throws Exception {
        direct.zooKeeper().create("/present", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        try (ZkClient holder = ZkClient.builder().connectString(server.getConnectString() + "/present")
                .connectionTimeout(WAIT).build(); ZkClient client = readOnly("/present")) {
            ZkMutex mutex = new ZkMutex(holder, "/locks/b");
            assertTrue(mutex.tryLock(10, TimeUnit.SECONDS));
            try {
                QueueSnapshot snapshot = Inspector.inspect(client, "/locks/b");
                assertTrue(snapshot.exists());
                assertEquals(1, snapshot.holders().size());
            } finally {
                mutex.unlock();
            }
        }
        assertNotNull(direct.zooKeeper().exists("/present", false));
    }
}
