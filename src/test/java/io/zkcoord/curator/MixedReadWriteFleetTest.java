package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Curator's {@code InterProcessReadWriteLock} and {@code ZkReadWriteLock} with {@link
 * Protocol#CURATOR} on one path: no writer beside anyone, readers together.
 */
class MixedReadWriteFleetTest {

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

    /** Two Curator clients and two of ours, each picking read or write at random: the invariant holds throughout. */
    @Test
    void noWriterWithAnyoneAcrossBothLibraries() throws Exception {
        run("/mixed/rw", CYCLES);
    }

    /** Soak: thousands of cycles. */
    @Tag("soak")
    @Test
    void noWriterWithAnyoneSoak() throws Exception {
        run("/mixed/rw-soak", SOAK_CYCLES);
    }

    /**
     * Readers of both libraries hold together; a writer of either waits for them, and readers that
     * come after a queued writer (of the other library) wait behind it: FIFO across modes.
     */
    @Test
    void readersTogetherWritersAloneInQueueOrder() throws Exception {
        String dir = "/mixed/rw-order";
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            CuratorFramework c = fleet.curator();
            InterProcessReadWriteLock curatorRw = new InterProcessReadWriteLock(c, dir);
            ZkClient z = fleet.zkcoord();
            ZkReadWriteLock ours = new ZkReadWriteLock(z, dir, Protocol.CURATOR);
            ZkReadWriteLock oursToo = new ZkReadWriteLock(fleet.zkcoord(), dir, Protocol.CURATOR);
            assertTrue(curatorRw.readLock().acquire(10, TimeUnit.SECONDS));
            assertTrue(ours.readLock().tryLock(10, TimeUnit.SECONDS), "our reader holds beside Curator's reader");
            assertFalse(oursToo.writeLock().tryLock(), "our writer does not hold beside readers");
            ExecutorService pool = Executors.newFixedThreadPool(2);
            AtomicBoolean readersGone = new AtomicBoolean();
            try {
                // Our writer queues behind both readers; then a Curator reader queues behind our writer.
                Future<Boolean> writer = pool.submit(() -> {
                    oursToo.writeLock().lock();
                    try {
                        return readersGone.get();
                    } finally {
                        oursToo.writeLock().unlock();
                    }
                });
                Await.until(Duration.ofSeconds(30), () -> children(c, dir) == 3, "our writer queued");
                CuratorFramework c2 = fleet.curator();
                InterProcessMutex lateReader = new InterProcessReadWriteLock(c2, dir).readLock();
                assertFalse(lateReader.acquire(200, TimeUnit.MILLISECONDS),
                        "a Curator reader behind our queued writer waits for it");
                readersGone.set(true);
                curatorRw.readLock().release();
                ours.readLock().unlock();
                assertTrue(writer.get(30, TimeUnit.SECONDS), "our writer held only after both readers left");
                assertTrue(lateReader.acquire(30, TimeUnit.SECONDS), "the Curator reader holds once our writer left");
                lateReader.release();
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static int children(CuratorFramework c, String dir) {
        try {
            return c.getChildren().forPath(dir).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A side of a read/write lock of either library, as the fleet's threads use it. */
    private record RwParty(String name, Fleet.Locking readLock, Runnable readUnlock, Fleet.Locking writeLock,
            Runnable writeUnlock) {
    }

    private static RwParty curatorParty(Fleet fleet, String dir, String name) throws Exception {
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(fleet.curator(), dir);
        return new RwParty(name, rw.readLock()::acquire, () -> release(rw.readLock()), rw.writeLock()::acquire,
                () -> release(rw.writeLock()));
    }

    private static void release(InterProcessMutex m) {
        try {
            m.release();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static RwParty ourParty(Fleet fleet, String dir, String name) {
        ZkReadWriteLock rw = new ZkReadWriteLock(fleet.zkcoord(), dir, Protocol.CURATOR);
        return new RwParty(name, rw.readLock()::lock, rw.readLock()::unlock, rw.writeLock()::lock,
                rw.writeLock()::unlock);
    }

    private static void run(String dir, int cycles) throws Exception {
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            List<RwParty> parties = List.of(curatorParty(fleet, dir, "curator-0"), curatorParty(fleet, dir, "curator-1"),
                    ourParty(fleet, dir, "zkcoord-2"), ourParty(fleet, dir, "zkcoord-3"));
            AtomicInteger readers = new AtomicInteger();
            AtomicInteger writers = new AtomicInteger();
            AtomicInteger maxReaders = new AtomicInteger();
            List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger entries = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(parties.size());
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (int p = 0; p < parties.size(); p++) {
                    RwParty party = parties.get(p);
                    Random random = new Random(p);
                    runs.add(pool.submit(() -> {
                        for (int i = 0; i < cycles; i++) {
                            if (random.nextInt(3) == 0) {
                                party.writeLock().lock();
                                try {
                                    int w = writers.incrementAndGet();
                                    int r = readers.get();
                                    if (w != 1 || r != 0) {
                                        problems.add(party.name() + " writes beside " + (w - 1) + " writer(s), " + r + " reader(s)");
                                    }
                                    Thread.yield();
                                    writers.decrementAndGet();
                                } finally {
                                    party.writeUnlock().run();
                                }
                            } else {
                                party.readLock().lock();
                                try {
                                    int r = readers.incrementAndGet();
                                    maxReaders.accumulateAndGet(r, Math::max);
                                    if (writers.get() != 0) {
                                        problems.add(party.name() + " reads beside a writer");
                                    }
                                    Thread.yield();
                                    readers.decrementAndGet();
                                } finally {
                                    party.readUnlock().run();
                                }
                            }
                            entries.incrementAndGet();
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
            assertEquals(List.of(), problems);
            assertEquals(cycles * parties.size(), entries.get());
        }
    }
}
