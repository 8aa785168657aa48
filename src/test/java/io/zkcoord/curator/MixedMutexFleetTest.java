package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.curator.Fleet.Party;
import io.zkcoord.curator.Fleet.Side;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Curator's {@code InterProcessMutex} and {@code ZkMutex} on one path, each party in its own
 * session: one fair FIFO queue, never two holders ({@link QueueWitness}). A few hundred cycles
 * here; the soak variants run thousands.
 */
class MixedMutexFleetTest {

    private static final int CYCLES = 60;
    private static final int SOAK_CYCLES = 1_500;

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    /** Two Curator clients and two zkcoord clients with Protocol.CURATOR: no overlap, FIFO across both. */
    @Test
    void curatorAndZkcoordShareOneFairQueue() throws Exception {
        run("/mixed/mutex", CYCLES, Side.CURATOR_LIBRARY, Side.CURATOR_LIBRARY, Side.ZKCOORD_AS_CURATOR,
                Side.ZKCOORD_AS_CURATOR);
    }

    /** The last step of a migration: zkcoord under both protocols, no Curator left, on one path. */
    @Test
    void bothProtocolsOfZkcoordShareOneFairQueue() throws Exception {
        run("/mixed/mutex-last-step", CYCLES, Side.ZKCOORD_AS_CURATOR, Side.ZKCOORD_AS_CURATOR, Side.ZKCOORD,
                Side.ZKCOORD);
    }

    /** Soak: thousands of cycles of the mixed Curator fleet. */
    @Tag("soak")
    @Test
    void curatorAndZkcoordSoak() throws Exception {
        run("/mixed/mutex-soak", SOAK_CYCLES, Side.CURATOR_LIBRARY, Side.CURATOR_LIBRARY, Side.ZKCOORD_AS_CURATOR,
                Side.ZKCOORD_AS_CURATOR);
    }

    /**
     * A ZKCOORD mutex that meets a Curator node counts it as a contender, in sequence order: it
     * waits behind a Curator holder, and holds once that holder releases.
     */
    @Test
    void zkcoordProtocolWaitsBehindCuratorNodes() throws Exception {
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            CuratorFramework c = fleet.curator();
            InterProcessMutex curatorMutex = new InterProcessMutex(c, "/mixed/behind");
            ZkMutex ours = new ZkMutex(fleet.zkcoord(), "/mixed/behind", Protocol.ZKCOORD);
            assertTrue(curatorMutex.acquire(10, TimeUnit.SECONDS));
            assertFalse(ours.tryLock(), "a Curator holder is first in the queue");
            ExecutorService pool = Executors.newSingleThreadExecutor();
            java.util.concurrent.atomic.AtomicBoolean releasing = new java.util.concurrent.atomic.AtomicBoolean();
            try {
                Future<Boolean> waiting = pool.submit(() -> {
                    ours.lock();
                    try {
                        return releasing.get();
                    } finally {
                        ours.unlock();
                    }
                });
                Await.until(java.time.Duration.ofSeconds(30), () -> childCount(c, "/mixed/behind") == 2,
                        "our waiter queued behind the Curator holder");
                assertFalse(waiting.isDone(), "held while the Curator holder is inside");
                releasing.set(true);
                curatorMutex.release();
                assertTrue(waiting.get(30, TimeUnit.SECONDS), "held only once the Curator holder released");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * Our per-entity directory removal does not break a Curator client: our last release removes
     * the directory (one we made), and Curator makes it again on its next create. A directory
     * Curator made carries no mark of ours and is left to the server's container reaper (removed
     * here by hand, as the reaper would), after which we make and remove it again.
     */
    @Test
    void directoryRemovalDoesNotBreakCurator() throws Exception {
        String dir = "/mixed/removed";
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            CuratorFramework c = fleet.curator();
            InterProcessMutex curatorMutex = new InterProcessMutex(c, dir);
            ZkClient z = fleet.zkcoord();
            ZkMutex ours = new ZkMutex(z, dir, Protocol.CURATOR);
            for (int i = 0; i < 5; i++) {
                ours.lock();
                ours.unlock();
                assertNull(z.zooKeeper().exists(dir, false), "our last release removed the directory");
                assertTrue(curatorMutex.acquire(10, TimeUnit.SECONDS), "Curator makes the directory again");
                assertEquals(1, z.zooKeeper().getChildren(dir, false).size());
                curatorMutex.release();
                ours.lock();
                ours.unlock();
                assertTrue(z.zooKeeper().getChildren(dir, false).isEmpty());
                c.delete().forPath(dir); // what the container reaper does to Curator's empty directory
            }
        }
    }

    private static int childCount(CuratorFramework c, String dir) {
        try {
            return c.getChildren().forPath(dir).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void run(String dir, int cycles, Side... sides) throws Exception {
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            List<Party> parties = new ArrayList<>();
            for (int i = 0; i < sides.length; i++) {
                parties.add(fleet.mutex(sides[i], dir, sides[i] + "-" + i));
            }
            ZkClient look = fleet.zkcoord();
            look.zooKeeper(); // connected before the first entry reads through it
            QueueWitness witness = new QueueWitness(look.zooKeeper(), dir);
            ExecutorService pool = Executors.newFixedThreadPool(parties.size());
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (Party p : parties) {
                    runs.add(pool.submit(() -> {
                        for (int i = 0; i < cycles; i++) {
                            p.lock().lock();
                            try {
                                witness.enter(p.name(), p.sessionId());
                            } finally {
                                p.unlock().run();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : runs) {
                    f.get(10, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(List.of(), witness.problems());
            assertEquals((long) cycles * parties.size(), witness.entries());
            java.util.Set<String> sideNames = new java.util.TreeSet<>();
            for (Side side : sides) {
                sideNames.add(side.name());
            }
            assertEquals(sideNames, witness.entriesBySide().keySet(), "every side held");
            assertTrue(look.zooKeeper().exists(dir, false) == null
                    || look.zooKeeper().getChildren(dir, false).isEmpty(), "nodes left behind");
        }
    }
}
