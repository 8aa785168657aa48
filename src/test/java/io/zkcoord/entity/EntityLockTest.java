package io.zkcoord.entity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.HoldingThread;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lock per entity against a real server: a fresh key is queued in one transaction that makes its
 * directory, and the last release removes the directory with its node, so keys used once leave
 * nothing behind. The server's container reaper is held off (its interval set to an hour) so that
 * every removal seen here is the library's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EntityLockTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Long sessions: idle pings (after a third of the timeout) are rare while requests are counted. */
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);

    @RegisterExtension
    static final ReaperlessServer SERVER = new ReaperlessServer(LONG_SESSION);

    private Stat stat(String path) throws Exception {
        return SERVER.admin().zooKeeper().exists(path, false);
    }

    private void persistent(String path, String data) throws Exception {
        try {
            SERVER.admin().zooKeeper().create(path, data.getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // made by an earlier test of this class
        }
    }

    /** The fewest requests (mntr packets, less the mntr call itself) {@code step} costs, over a few tries. */
    private long fewest(int tries, LongSupplier step) {
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i < tries; i++) {
            fewest = Math.min(fewest, step.getAsLong());
        }
        return fewest;
    }

    /**
     * A fresh key, uncontended: lock() is 2 requests (one multi that makes the directory and the
     * node, one pipelined read), and the directory and node share one czxid (one transaction);
     * unlock() is 1 request (one multi deleting both), and leaves no directory.
     */
    @Test
    void aFreshKeyCostsOneMultiAndOneReadAndLeavesNothing() throws Exception {
        persistent("/cost", "");
        ZkClient c = SERVER.client();
        new ZkMutex(c, "/cost/warm").lock(); // the session's first request is not counted
        int[] key = {0};
        long[] unlockCost = {Long.MAX_VALUE};
        long lockCost = fewest(5, () -> {
            String path = "/cost/e-" + key[0]++;
            ZkMutex mutex = new ZkMutex(c, path);
            long before = SERVER.flw().packetsReceived();
            mutex.lock();
            long held = SERVER.flw().packetsReceived();
            mutex.unlock();
            long after = SERVER.flw().packetsReceived();
            unlockCost[0] = Math.min(unlockCost[0], after - held - 1);
            return held - before - 1;
        });
        assertEquals(2, lockCost, "requests of lock() on a fresh key: one multi, one getChildren");
        assertEquals(1, unlockCost[0], "requests of unlock(): one multi");

        ZkMutex mutex = new ZkMutex(c, "/cost/one-transaction");
        mutex.lock();
        assertEquals(mutex.fencingToken(), stat("/cost/one-transaction").getCzxid(),
                "the directory is made in the node's transaction");
        mutex.unlock();
        for (int i = 0; i < key[0]; i++) {
            assertNull(stat("/cost/e-" + i), "directory left by key " + i);
        }
        assertNull(stat("/cost/one-transaction"));
        assertNotNull(stat("/cost"), "the parent the user made stays");
    }

    /**
     * The release removes only the lock's own directory: parents made by the library for it (as
     * containers) and by the user stay, and so does a directory the library did not make (a
     * persistent node the user created, with its data).
     */
    @Test
    void onlyTheLibrarysOwnDirectoryIsRemoved() throws Exception {
        ZkClient c = SERVER.client();
        ZkMutex deep = new ZkMutex(c, "/made/by/library");
        deep.lock();
        deep.unlock();
        assertNull(stat("/made/by/library"));
        assertNotNull(stat("/made/by"), "a parent is never removed by a release");

        persistent("/user-dir", "the user's");
        ZkMutex mutex = new ZkMutex(c, "/user-dir");
        mutex.lock();
        mutex.unlock();
        assertNotNull(stat("/user-dir"), "a persistent directory the library did not make stays");
        assertEquals("the user's", new String(SERVER.admin().zooKeeper().getData("/user-dir", false, null),
                StandardCharsets.UTF_8));
        assertEquals(List.of(), SERVER.admin().zooKeeper().getChildren("/user-dir", false));
    }

    /**
     * A release while someone waits keeps the directory (the waiter's node is in it); the waiter's
     * own release, the last, removes it.
     */
    @Test
    void aReleaseKeepsTheDirectoryWhileSomeoneWaits() throws Exception {
        String path = "/wait/k";
        ZkMutex holder = new ZkMutex(SERVER.client(), path);
        holder.lock();
        List<Boolean> held = new ArrayList<>();
        HoldingThread waiter = new HoldingThread("waiter", new ZkMutex(SERVER.client(), path), t -> {
            synchronized (held) {
                held.add(true);
            }
        });
        waiter.start();
        Await.until(WAIT, () -> SERVER.children(path).size() == 2, "the waiter queued");
        holder.unlock();
        Await.until(WAIT, () -> {
            synchronized (held) {
                return !held.isEmpty();
            }
        }, "the waiter holds");
        assertNotNull(stat(path), "the directory stays while the waiter's node is in it");
        assertEquals(1, SERVER.children(path).size());
        waiter.release();
        waiter.join(WAIT.toMillis());
        assertNull(waiter.failure());
        assertNull(stat(path), "the last release removes the directory");
    }

    /**
     * An enqueue racing the directory's removal: a client that knows the directory (it queued
     * there) creates its node after another client's release removed it; the create fails with
     * NONODE and the same acquisition makes the directory again (its token is the directory's
     * czxid: one transaction made both).
     */
    @Test
    void anEnqueueAfterTheRemovalMakesTheDirectoryAgain() throws Exception {
        String path = "/race/k";
        ZkMutex first = new ZkMutex(SERVER.client(), path);
        ZkMutex second = new ZkMutex(SERVER.client(), path);
        first.lock();
        assertFalse(second.tryLock(), "one look while held");
        Await.until(WAIT, () -> SERVER.children(path).size() == 1, "the one look's node is deleted");
        first.unlock();
        assertNull(stat(path), "removed by the release");
        assertTrue(second.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(second.fencingToken(), stat(path).getCzxid(), "made again with the node");
        second.unlock();
        assertNull(stat(path));
    }

    /** Every recipe on fresh keys: held, its directory made with its node, and nothing left after. */
    @Test
    void everyRecipeOnFreshKeysLeavesNothing() throws Exception {
        ZkClient c = SERVER.client();
        ZkReadWriteLock rw = new ZkReadWriteLock(c, "/every/rw");
        rw.readLock().lock();
        rw.readLock().unlock();
        assertNull(stat("/every/rw"), "read lock");
        rw.writeLock().lock();
        rw.writeLock().unlock();
        assertNull(stat("/every/rw"), "write lock");

        try (ZkLease lease = new ZkMutex(c, "/every/lease").acquire()) {
            assertEquals(lease.fencingToken(), stat("/every/lease").getCzxid());
        }
        assertNull(stat("/every/lease"), "a mutex lease");

        ZkSemaphore sem = new ZkSemaphore(c, "/every/sem", 2);
        try (ZkLease lease = sem.acquire()) {
            assertEquals("permits=2", new String(SERVER.admin().zooKeeper().getData("/every/sem", false, null),
                    StandardCharsets.UTF_8), "the permit record is made with the directory");
        }
        assertNull(stat("/every/sem"), "semaphore");

        ZkMultiLock multi = new ZkMultiLock(c, List.of("/every/acct-1", "/every/acct-2"));
        multi.lock();
        assertEquals(multi.fencingToken(), stat("/every/acct-2").getCzxid());
        multi.unlock();
        assertNull(stat("/every/acct-1"), "multi-lock, first path");
        assertNull(stat("/every/acct-2"), "multi-lock, second path");

        ZkLeaderElection election = new ZkLeaderElection(c, "/every/leader", "p1");
        election.start();
        assertTrue(election.awaitLeadership(WAIT));
        election.close();
        Await.until(WAIT, () -> {
            try {
                return stat("/every/leader") == null;
            } catch (Exception e) {
                return false;
            }
        }, "the election's directory is removed once its only participant leaves");
    }

    /**
     * The permit record is recreated with the directory; while it exists, a member built with
     * another count is refused with IllegalStateException (and its node deleted), as before.
     */
    @Test
    void theSemaphoresPermitRecordComesBackWithItsDirectory() throws Exception {
        String path = "/sem-record/k";
        ZkSemaphore two = new ZkSemaphore(SERVER.client(), path, 2);
        ZkSemaphore three = new ZkSemaphore(SERVER.client(), path, 3);
        ZkLease lease = two.acquire();
        assertThrows(IllegalStateException.class, three::acquire, "another count while the record exists");
        Await.until(WAIT, () -> SERVER.children(path).size() == 1, "the refused member's node is deleted");
        lease.release();
        assertNull(stat(path));
        try (ZkLease mine = three.acquire()) {
            assertEquals("permits=3", new String(SERVER.admin().zooKeeper().getData(path, false, null), StandardCharsets.UTF_8));
            assertThrows(IllegalStateException.class, two::acquire, "the record now says 3");
        }
    }

    /** The Inspector reads a removed directory as the idle state, and says so. */
    @Test
    void theInspectorCallsAMissingDirectoryIdle() throws Exception {
        String path = "/inspect/k";
        ZkMutex mutex = new ZkMutex(SERVER.client(), path);
        mutex.lock();
        QueueSnapshot busy = Inspector.inspect(SERVER.admin(), path);
        assertTrue(busy.exists());
        assertEquals(1, busy.holders().size());
        mutex.unlock();
        QueueSnapshot idle = Inspector.inspect(SERVER.admin(), path);
        assertFalse(idle.exists(), "removed by the release");
        assertTrue(idle.idle());
        assertEquals(List.of(), idle.entries());
    }
}
