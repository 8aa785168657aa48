package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connect string with a chroot ({@code host:port/app}): the client creates {@code /app} when it connects
 * (io.zkcoord.ChrootCreationTest); when {@code /app} is deleted after that, a lock says so, naming it, and
 * creates nothing anywhere; while {@code /app} exists the lock lives under it.
 */
@Timeout(60)
class ChrootTest {

    private static final Logger LOG = LoggerFactory.getLogger(ChrootTest.class);

    private static final String CHROOT = "/app";
    private static final Duration SESSION = Duration.ofSeconds(10);

    private TestingServer server;
    /** No chroot: sees the whole tree. */
    private ZkClient direct;
    /** Rooted at {@link #CHROOT}. */
    private ZkClient chrooted;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        direct = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION).build();
        chrooted = ZkClient.builder().connectString(server.getConnectString() + CHROOT).sessionTimeout(SESSION).build();
    }

    @AfterEach
    void stop() throws Exception {
        if (chrooted != null) {
            chrooted.close();
        }
        if (direct != null) {
            direct.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** With the chroot node deleted after the client connected, tryLock(2 s) throws CoordinationException naming /app, and no node is created anywhere. */
    @Test
    void missingChrootIsReportedAndNothingIsCreated() throws Exception {
        direct.zooKeeper().delete(CHROOT, -1);
        List<String> rootBefore = direct.zooKeeper().getChildren("/", false);
        assertNull(direct.zooKeeper().exists(CHROOT, false), "precondition: " + CHROOT + " does not exist");
        ZkMutex mutex = new ZkMutex(chrooted, "/locks/orders");

        long start = System.nanoTime();
        CompletableFuture<Boolean> attempt = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = mutex.tryLock(2, TimeUnit.SECONDS);
                if (got) {
                    mutex.unlock();
                }
                return got;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Object outcome;
        try {
            outcome = attempt.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            outcome = e.getCause();
        } catch (TimeoutException e) {
            outcome = "still blocked after 20 s";
        }
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LOG.info("MEASURED tryLock(2 s) under a missing chroot: {} ms, outcome {}", took, String.valueOf(outcome));

        CoordinationException thrown = assertInstanceOf(CoordinationException.class, outcome,
                "tryLock(2 s) under the missing chroot " + CHROOT + " (took " + took + " ms): " + outcome);
        assertNotNull(thrown.getMessage());
        assertTrue(thrown.getMessage().contains(CHROOT), "the message names the missing chroot: " + thrown.getMessage());
        assertFalse(mutex.isHeldByCurrentThread());

        assertNull(direct.zooKeeper().exists(CHROOT, false), CHROOT + " must not have been created");
        assertEquals(rootBefore, direct.zooKeeper().getChildren("/", false), "nothing new at the root");
        assertNull(direct.zooKeeper().exists("/locks", false), "the lock directory was not created outside the chroot");
    }

    /** Once /app exists, the chroot client locks with its node under /app/<lockpath>, and unlock leaves nothing there. */
    @Test
    void existingChrootHoldsTheLockUnderIt() throws Exception {
        assertNotNull(direct.zooKeeper().exists(CHROOT, false), "the chroot client created " + CHROOT);
        String lockPath = "/locks/orders";
        ZkMutex mutex = new ZkMutex(chrooted, lockPath);

        assertTrue(mutex.tryLock(10, TimeUnit.SECONDS), "the chroot client locks");
        try {
            List<String> nodes = LockQueue.children(direct, CHROOT + lockPath);
            assertEquals(1, nodes.size(), "one lock node under " + CHROOT + lockPath + ": " + nodes);
            assertEquals(nodes, LockQueue.children(chrooted, lockPath), "the chroot client sees the same node");
            assertNull(direct.zooKeeper().exists(lockPath, false), "nothing outside the chroot");
            assertTrue(mutex.fencingToken() > 0);
        } finally {
            mutex.unlock();
        }
        Await.until("no node left under " + CHROOT + lockPath, Duration.ofSeconds(10),
                () -> LockQueue.children(direct, CHROOT + lockPath).isEmpty());
        assertNull(direct.zooKeeper().exists(lockPath, false), "nothing outside the chroot");
    }
}
