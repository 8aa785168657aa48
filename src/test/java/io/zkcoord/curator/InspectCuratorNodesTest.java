package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** The Inspector reports Curator's nodes (and ours under Protocol.CURATOR) as holders and waiters, with their data. */
class InspectCuratorNodesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void curatorNodesAreHoldersAndWaiters() throws Exception {
        try (TestingServer server = new TestingServer(true); Fleet fleet = new Fleet(server.getConnectString())) {
            ZkClient look = fleet.zkcoord();
            // A mutex: Curator holds, ours (CURATOR) waits behind it.
            CuratorFramework c = fleet.curator();
            InterProcessMutex curatorMutex = new InterProcessMutex(c, "/inspect/mutex");
            assertTrue(curatorMutex.acquire(10, TimeUnit.SECONDS));
            ZkMutex ours = new ZkMutex(fleet.zkcoord(), "/inspect/mutex", Protocol.CURATOR);
            Thread waiter = new Thread(ours::lock);
            waiter.setDaemon(true);
            waiter.start();
            Await.until(WAIT, () -> snapshot(look, "/inspect/mutex").entries().size() == 2, "our waiter queued");
            QueueSnapshot mutex = snapshot(look, "/inspect/mutex");
            assertEquals(List.of("lock", "lock"), mutex.entries().stream().map(QueueSnapshot.Entry::kind).toList());
            QueueSnapshot.Entry holder = mutex.holders().get(0);
            assertTrue(holder.nodeName().startsWith("_c_") && holder.nodeName().contains("-lock-"), holder.nodeName());
            assertEquals(c.getZookeeperClient().getZooKeeper().getSessionId(), holder.sessionId());
            assertFalse(holder.ownerHost().isEmpty(), "Curator's data, the client's IP address, is the host");
            assertEquals(1, mutex.waiters().size());
            assertTrue(mutex.waiters().get(0).nodeName().startsWith("_c_"), "ours writes Curator's names");
            curatorMutex.release();
            waiter.join(WAIT.toMillis());

            // A read/write lock: a Curator reader and ours hold, a Curator writer waits.
            InterProcessReadWriteLock curatorRw = new InterProcessReadWriteLock(c, "/inspect/rw");
            assertTrue(curatorRw.readLock().acquire(10, TimeUnit.SECONDS));
            ZkReadWriteLock oursRw = new ZkReadWriteLock(fleet.zkcoord(), "/inspect/rw", Protocol.CURATOR);
            Thread reader = new Thread(() -> {
                oursRw.readLock().lock();
            });
            reader.start();
            reader.join(WAIT.toMillis());
            InterProcessMutex curatorWriter = new InterProcessReadWriteLock(fleet.curator(), "/inspect/rw").writeLock();
            Thread writer = new Thread(() -> {
                try {
                    curatorWriter.acquire();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            writer.setDaemon(true);
            writer.start();
            Await.until(WAIT, () -> snapshot(look, "/inspect/rw").entries().size() == 3, "the Curator writer queued");
            QueueSnapshot rw = snapshot(look, "/inspect/rw");
            assertEquals(List.of("read", "read"), rw.holders().stream().map(QueueSnapshot.Entry::kind).toList());
            assertEquals(List.of("write"), rw.waiters().stream().map(QueueSnapshot.Entry::kind).toList());

            // A LeaderLatch leads; its data, the participant id, is reported as the owner thread.
            try (LeaderLatch latch = new LeaderLatch(c, "/inspect/election", "latch-7");
                    ZkLeaderElection election = new ZkLeaderElection(fleet.zkcoord(), "/inspect/election", "ours-8",
                            Protocol.CURATOR)) {
                latch.start();
                assertTrue(latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS));
                election.start();
                Await.until(WAIT, () -> snapshot(look, "/inspect/election").entries().size() == 2, "ours joined");
                QueueSnapshot e = snapshot(look, "/inspect/election");
                assertEquals("latch-7", e.holders().get(0).ownerThread());
                assertEquals("ours-8", e.waiters().get(0).ownerThread());
                assertEquals("leader", e.waiters().get(0).kind());
            }
        }
    }

    private static QueueSnapshot snapshot(ZkClient client, String path) {
        try {
            return Inspector.inspect(client, path);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
