package io.zkcoord.entity;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A client's count of its running acquisitions per directory ends with every acquisition, however
 * it ends: an acquisition that gave up (time limit, one look, interrupt, cancel, a session lost
 * while it waited) leaves no count behind, so the client's next uncontended hold there still
 * removes the directory with its node. A count left behind would keep that directory forever.
 * The container reaper is held off, so every removal seen is the library's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AcquisitionCountTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);

    private TestingServer server;
    private ZkClient admin;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    void startServer() throws Exception {
        server = EntityServers.withoutReaper();
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
    }

    @AfterAll
    void stopServer() throws Exception {
        admin.close();
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(ZkClient::close);
        clients.clear();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(LONG_SESSION).build();
        clients.add(c);
        return c;
    }

    private Stat stat(String path) throws Exception {
        return admin.zooKeeper().exists(path, false);
    }

    private List<String> children(String path) {
        try {
            return admin.zooKeeper().getChildren(path, false);
        } catch (Exception e) {
            return List.of();
        }
    }

    /**
     * Another client holds {@code path} while {@code giveUp} ends an acquisition of {@code c} there
     * without a grant; then the other releases, and {@code c} locks and unlocks once alone: that
     * release must take the directory along.
     */
    private void afterGivingUpTheNextHoldRemovesTheDirectory(ZkClient c, String path, GiveUp giveUp)
            throws Exception {
        ZkMutex holder = new ZkMutex(client(), path);
        holder.lock();
        giveUp.run(new ZkMutex(c, path));
        Await.until(WAIT, () -> children(path).size() == 1, "only the holder's node is left");
        holder.unlock();
        ZkMutex again = new ZkMutex(c, path);
        assertTrue(again.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        again.unlock();
        assertNull(stat(path), "the release of the client's only hold removes the directory");
    }

    private interface GiveUp {
        void run(ZkMutex mine) throws Exception;
    }

    @Test
    void aTimedOutWaitLeavesNoCount() throws Exception {
        afterGivingUpTheNextHoldRemovesTheDirectory(client(), "/count/timeout",
                mine -> assertFalse(mine.tryLock(200, TimeUnit.MILLISECONDS)));
    }

    @Test
    void aOneLookLeavesNoCount() throws Exception {
        afterGivingUpTheNextHoldRemovesTheDirectory(client(), "/count/one-look", mine -> assertFalse(mine.tryLock()));
    }

    @Test
    void anInterruptedWaitLeavesNoCount() throws Exception {
        afterGivingUpTheNextHoldRemovesTheDirectory(client(), "/count/interrupt", mine -> {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    mine.lockInterruptibly();
                    thrown.set(new AssertionError("held while another client holds"));
                } catch (Throwable t) {
                    thrown.set(t);
                }
            }, "interrupted-waiter");
            waiter.start();
            Await.until(WAIT, () -> children("/count/interrupt").size() == 2, "the waiter queued");
            waiter.interrupt();
            waiter.join(WAIT.toMillis());
            assertFalse(waiter.isAlive());
            assertTrue(thrown.get() instanceof InterruptedException, String.valueOf(thrown.get()));
        });
    }

    @Test
    void aCancelledAsyncAcquisitionLeavesNoCount() throws Exception {
        afterGivingUpTheNextHoldRemovesTheDirectory(client(), "/count/cancel", mine -> {
            CompletableFuture<ZkLease> lease = mine.acquireAsync();
            Await.until(WAIT, () -> children("/count/cancel").size() == 2, "the acquisition queued");
            assertTrue(lease.cancel(false));
        });
    }

    @Test
    void aWaitThatOutlivedItsSessionLeavesNoCount() throws Exception {
        ZkClient c = client();
        afterGivingUpTheNextHoldRemovesTheDirectory(c, "/count/expiry", mine -> {
            CompletableFuture<ZkLease> lease = mine.acquireAsync();
            Await.until(WAIT, () -> children("/count/expiry").size() == 2, "the acquisition queued");
            List<String> before = children("/count/expiry");
            SessionExpiry.expireOnServer(c.zooKeeper(), server.getConnectString(), WAIT);
            // Queued again in the next session (a new node), then given up.
            Await.until(WAIT, () -> {
                List<String> now = children("/count/expiry");
                return now.size() == 2 && !now.equals(before);
            }, "queued again in the new session");
            assertTrue(lease.cancel(false));
        });
    }

    @Test
    void aMultiLockThatTimedOutLeavesNoCountInAnyDirectory() throws Exception {
        ZkClient c = client();
        List<String> paths = List.of("/count/multi-a", "/count/multi-b");
        ZkMutex holder = new ZkMutex(client(), paths.get(1));
        holder.lock();
        ZkMultiLock multi = new ZkMultiLock(c, paths);
        Optional<ZkLease> none = multi.tryAcquire(Duration.ofMillis(200));
        assertTrue(none.isEmpty());
        Await.until(WAIT, () -> children(paths.get(1)).size() == 1, "only the holder's node is left");
        holder.unlock();
        ZkMultiLock again = new ZkMultiLock(c, paths);
        assertTrue(again.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        again.unlock();
        for (String p : paths) {
            assertNull(stat(p), p + ": removed by the release of the client's only hold");
        }
    }
}
