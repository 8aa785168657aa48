package io.zkcoord.curator;

import static io.zkcoord.curator.CasesFixture.SHORT;
import static io.zkcoord.curator.CasesFixture.WAIT;
import static io.zkcoord.curator.CasesFixture.children;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.curator.Contender.Library;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The scenarios of Curator's read/write lock tests ({@code TestInterProcessReadWriteLock} and its
 * base) that mean the same for a mixed pair, run with Curator's {@code InterProcessReadWriteLock} on
 * one side and {@code ZkReadWriteLock} with {@code Protocol.CURATOR} on the other, in separate
 * sessions on one path. Our own tests, written from what Curator's cases check.
 *
 * <p>Ported: participant nodes ({@code testGetParticipantNodes}: Curator counts our readers and
 * writers as its own), contending downgrade ({@code testDowngrading}, {@code
 * testContendingDowngrading}), a writer against constant readers ({@code
 * testWriterAgainstConstantReaders}), a writer whose session is killed ({@code testLockPath}).
 * Already on main: {@code testBasic} ({@link MixedReadWriteFleetTest}'s random mixed fleet) and
 * {@code testOrdering} (its readers-together, writers-alone-in-queue-order case). Not ported: {@code
 * testThatUpgradingIsDisallowed} and {@code testThatDowngradingRespectsThreads} (rules of one lock
 * object inside one process, with no second library involved) and {@code testSetNodeData}
 * (Curator's option for the node's data).
 */
class CuratorReadWriteCasesTest {

    @RegisterExtension
    static final CasesFixture server = new CasesFixture();

    /** Both kinds of lock of one library, in a session of its own. */
    private record Rw(Contender read, Contender write) {
        static Rw of(Library library, Fleet fleet, String dir) throws Exception {
            if (library == Library.CURATOR) {
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(fleet.curator(), dir);
                return new Rw(Contender.curator(rw.readLock()), Contender.curator(rw.writeLock()));
            }
            ZkReadWriteLock rw = new ZkReadWriteLock(fleet.zkcoord(), dir, Protocol.CURATOR);
            return new Rw(Contender.zkcoord(rw.readLock()), Contender.zkcoord(rw.writeLock()));
        }
    }

    /**
     * Readers of both libraries hold and writers of both queue: Curator's own participant lists
     * count ours with its own, two readers and one writer of each library.
     */
    @Test
    void curatorCountsOurReadersAndWritersAsParticipants() throws Exception {
        String dir = "/rw-cases/participants";
        try (Fleet fleet = new Fleet(server.connectString())) {
            List<Contender> readers = new ArrayList<>();
            List<Contender> writers = new ArrayList<>();
            for (Library library : Library.values()) {
                Rw shared = Rw.of(library, fleet, dir); // two threads on one lock object, as Curator's test
                readers.add(shared.read());
                readers.add(shared.read());
                writers.add(Rw.of(library, fleet, dir).write());
            }
            ZooKeeper look = fleet.zkcoord().zooKeeper();
            CountDownLatch exit = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(readers.size() + writers.size());
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (Contender c : readers) {
                    runs.add(pool.submit(() -> holdUntil(c, exit)));
                }
                Await.until(WAIT, () -> children(look, dir) == readers.size(), "every reader holds");
                for (Contender c : writers) {
                    runs.add(pool.submit(() -> holdUntil(c, exit)));
                }
                Await.until(WAIT, () -> children(look, dir) == readers.size() + writers.size(), "every writer queued");
                InterProcessReadWriteLock curatorView = new InterProcessReadWriteLock(fleet.curator(), dir);
                assertEquals(readers.size(), curatorView.readLock().getParticipantNodes().size());
                assertEquals(writers.size(), curatorView.writeLock().getParticipantNodes().size());
                exit.countDown();
                for (Future<?> f : runs) {
                    f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            Await.until(WAIT, () -> children(look, dir) == 0, "no node left");
        }
    }

    /**
     * A writer of one library downgrades (takes the read lock, then releases the write lock) while
     * a writer of the other library is queued: that writer stays out until the read hold is
     * released, and another writer of that library asking meanwhile is kept out too.
     */
    @ParameterizedTest
    @EnumSource(Library.class)
    void downgradeKeepsTheOtherLibrarysWriterOut(Library downgrader) throws Exception {
        String dir = "/rw-cases/downgrade-" + downgrader;
        try (Fleet fleet = new Fleet(server.connectString())) {
            Rw mine = Rw.of(downgrader, fleet, dir);
            Contender queuedWriter = Rw.of(downgrader.other(), fleet, dir).write();
            Contender lateWriter = Rw.of(downgrader.other(), fleet, dir).write();
            ZooKeeper look = fleet.zkcoord().zooKeeper();
            assertTrue(mine.write().tryFor(WAIT));
            AtomicBoolean readReleased = new AtomicBoolean();
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<Boolean> writer = pool.submit(() -> {
                    queuedWriter.lock();
                    try {
                        return readReleased.get();
                    } finally {
                        queuedWriter.unlock();
                    }
                });
                Await.until(WAIT, () -> children(look, dir) == 2, "the other library's writer queued");
                assertTrue(mine.read().tryFor(WAIT), "the write holder takes the read lock");
                mine.write().unlock();
                assertFalse(lateWriter.tryFor(SHORT), "no writer beside the downgraded read hold");
                assertFalse(writer.isDone(), "the queued writer waits for the downgraded read hold");
                readReleased.set(true);
                mine.read().unlock();
                assertTrue(writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                        "the queued writer held only after the read hold was released");
            } finally {
                pool.shutdownNow();
            }
            Await.until(WAIT, () -> children(look, dir) == 0, "no node left");
        }
    }

    /**
     * Readers of both libraries take the read lock over and over, never all out at once; a writer
     * of either library still gets in, each time it asks, because readers arriving after it queue
     * behind it.
     */
    @ParameterizedTest
    @EnumSource(Library.class)
    void writerGetsInAgainstConstantReadersOfBothLibraries(Library writerLibrary) throws Exception {
        String dir = "/rw-cases/constant-readers-" + writerLibrary;
        int writerAttempts = 3;
        try (Fleet fleet = new Fleet(server.connectString())) {
            List<Contender> readers = new ArrayList<>();
            for (Library library : Library.values()) {
                readers.add(Rw.of(library, fleet, dir).read());
                readers.add(Rw.of(library, fleet, dir).read());
            }
            Contender writer = Rw.of(writerLibrary, fleet, dir).write();
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(readers.size());
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (Contender r : readers) {
                    runs.add(pool.submit(() -> {
                        while (!stop.get()) {
                            r.lock();
                            try {
                                Thread.sleep(20); // the read work: readers overlap all the time
                            } finally {
                                r.unlock();
                            }
                        }
                        return null;
                    }));
                }
                for (int i = 0; i < writerAttempts; i++) {
                    assertTrue(writer.tryFor(WAIT), writer.library() + " writer starved, attempt " + (i + 1));
                    writer.unlock();
                }
                stop.set(true);
                for (Future<?> f : runs) {
                    f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
            } finally {
                stop.set(true);
                pool.shutdownNow();
            }
        }
    }

    /**
     * A writer's session is ended by the server while it holds: its node goes, and a reader of the
     * other library holds.
     */
    @ParameterizedTest
    @EnumSource(Library.class)
    void readerHoldsOnceTheWritersSessionIsKilled(Library writerLibrary) throws Exception {
        String dir = "/rw-cases/killed-writer-" + writerLibrary;
        try (Fleet fleet = new Fleet(server.connectString())) {
            ZooKeeper writerHandle;
            Contender writer;
            if (writerLibrary == Library.CURATOR) {
                CuratorFramework c = fleet.curator();
                writer = Contender.curator(new InterProcessReadWriteLock(c, dir).writeLock());
                writerHandle = c.getZookeeperClient().getZooKeeper();
            } else {
                ZkClient z = fleet.zkcoord();
                writer = Contender.zkcoord(new ZkReadWriteLock(z, dir, Protocol.CURATOR).writeLock());
                writerHandle = z.zooKeeper();
            }
            Contender reader = Rw.of(writerLibrary.other(), fleet, dir).read();
            ZooKeeper look = fleet.zkcoord().zooKeeper();
            assertTrue(writer.tryFor(WAIT));
            String writerNode = dir + "/" + look.getChildren(dir, false).get(0);
            assertFalse(reader.tryFor(SHORT), "no reader beside the writer");
            SessionExpiry.expireOnServer(writerHandle, server.connectString(), WAIT);
            assertTrue(reader.tryFor(WAIT), "the reader holds once the writer's session ended");
            assertNull(look.exists(writerNode, false), "the writer's node went with its session");
            reader.unlock();
            try {
                writer.unlock();
            } catch (Exception e) {
                // Curator's release of a node that went with its session
            }
        }
    }

    private static Void holdUntil(Contender c, CountDownLatch exit) throws Exception {
        c.lock();
        try {
            exit.await();
        } finally {
            c.unlock();
        }
        return null;
    }
}
