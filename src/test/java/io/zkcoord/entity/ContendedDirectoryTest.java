package io.zkcoord.entity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.CounterWindow;
import io.zkcoord.testing.HoldingThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Directories the library made, under contention across sessions: a release whose view of the
 * queue was its node alone may remove the directory with its node. A lone holder of a fresh key
 * keeps the children watch its granting read set, so a waiter's create tells it and its release
 * reads the queue before it deletes its node alone; so does the release of a holder granted on a
 * stale view (by the watch on its predecessor). Neither sends a removal that the server refuses ({@code NOTEMPTY}, an
 * error transaction written like any other): every handoff is 1 write, the first episode's too.
 * A client that saw someone queue knows the directory contended and removes nothing there until
 * the episode is over. Counted on the server ({@code mntr}). The container reaper is held off, so
 * every removal seen is the library's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ContendedDirectoryTest {

    private static final Logger log = LoggerFactory.getLogger(ContendedDirectoryTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Long sessions: a client pings after a third of it without sending, and every window is opened by a request. */
    private static final Duration LONG_SESSION = Duration.ofSeconds(60);
    private static final int HANDOFFS = 12;

    @RegisterExtension
    static final ReaperlessServer SERVER = new ReaperlessServer(LONG_SESSION);

    /**
     * Two sessions taking turns on one fresh key, each queueing again while the other holds: every
     * handoff is 1 write and 1 notification. The first holder's watch saw the waiter queue, and
     * the first waiter was granted by the watch on a view of its node alone: each reads the queue
     * before its release (2 requests), finds the other queued and deletes its node alone; from
     * then on both know the directory contended: 1 request per handoff, and the directory is kept
     * throughout.
     */
    @Test
    void twoSessionsPayOneWritePerHandoff() throws Exception {
        List<Handoff> handoffs = takeTurns("/steady/two", 2);
        for (int i = 0; i < handoffs.size(); i++) {
            Handoff h = handoffs.get(i);
            assertEquals(1, h.fired, "notifications of handoff " + i);
            assertEquals(1, h.writes, "handoff " + i + ": the delete alone, no refused removal");
            assertEquals(i < 2 ? 2 : 1, h.requests, "handoff " + i + ": the delete"
                    + (i < 2 ? ", after the read of the queue" : "") + "; the successor holds on its watch");
        }
    }

    /**
     * Three sessions taking turns: 1 write per handoff from the first on; the others read a queue
     * with nodes behind theirs and never try a removal.
     */
    @Test
    void threeSessionsPayOneWritePerHandoff() throws Exception {
        List<Handoff> handoffs = takeTurns("/steady/three", 3);
        for (int i = 0; i < handoffs.size(); i++) {
            Handoff h = handoffs.get(i);
            assertEquals(1, h.fired, "notifications of handoff " + i);
            assertEquals(1, h.writes, "writes of handoff " + i);
        }
    }

    /**
     * A key contended once, whose last waiter removed the directory: the client that was refused
     * uses it again alone, makes it again (a new lifetime, so the episode is over for it too) and
     * removes it with its release.
     */
    @Test
    void aKeyRemovedByItsLastWaiterIsRemovedAgainByTheNextUse() throws Exception {
        String path = "/episode/removed";
        ZkMutex refused = new ZkMutex(SERVER.client(), path);
        ZkMutex last = new ZkMutex(SERVER.client(), path);
        refused.lock();
        HoldingThread waiter = queued(last, path, 2);
        refused.unlock(); // its watch saw the waiter queue: the delete alone, and contended for it
        waiter.release();
        join(waiter);
        assertNull(stat(path), "the waiter, never refused, removed the directory with its node");

        refused.lock();
        assertEquals(refused.fencingToken(), stat(path).getCzxid(), "made again in the node's transaction");
        refused.unlock();
        assertNull(stat(path), "removed by the release of the client that was refused before");
    }

    /**
     * A key contended once, whose last holder knew it contended: the directory is kept (left to
     * the reaper); the next use alone cannot tell yet that the episode is over and keeps it too;
     * the one after finds that nobody touched the directory in between (its child version up by
     * exactly its own delete and create) and removes it.
     */
    @Test
    void aKeyKeptByAContendedClientIsRemovedByItsSecondQuietUse() throws Exception {
        String path = "/episode/kept";
        ZkMutex x = new ZkMutex(SERVER.client(), path);
        ZkMutex y = new ZkMutex(SERVER.client(), path);
        x.lock();
        HoldingThread yHolds = queued(y, path, 2);
        x.unlock(); // its watch saw y queue: the delete alone
        Await.until(WAIT, () -> SERVER.children(path).size() == 1, "x's node deleted");
        HoldingThread xHolds = queued(x, path, 2);
        yHolds.release(); // y was granted on a stale view of its node alone: it reads the queue, x is queued
        join(yHolds);
        xHolds.release(); // x knows the directory contended: its node alone
        join(xHolds);
        Stat kept = stat(path);
        assertNotNull(kept, "the last holder of the episode knew it contended: the directory is kept");
        assertEquals(0, kept.getNumChildren());

        x.lock();
        x.unlock();
        assertNotNull(stat(path), "first use alone: no quiet cycle seen yet");
        assertEquals(kept.getCzxid(), stat(path).getCzxid());
        x.lock();
        x.unlock();
        assertNull(stat(path), "second use alone: nobody came between the two, the directory goes");
    }

    /**
     * A client that gave up waiting behind a holder (its {@code delete} of the directory refused:
     * the holder's node, which it saw, was still there) and then waits again and holds last: the
     * refusal said nothing about others queueing since it looked, so its release, on a view of its
     * node alone, removes the directory. The duplicate request of a lock per entity, retried.
     */
    @Test
    void aWaiterThatGaveUpStillRemovesTheDirectoryWhenItHoldsLast() throws Exception {
        String path = "/episode/retried";
        ZkMutex holder = new ZkMutex(SERVER.client(), path);
        ZkClient retrying = SERVER.client();
        holder.lock();
        ZkMutex first = new ZkMutex(retrying, path);
        assertEquals(false, first.tryLock(50, TimeUnit.MILLISECONDS), "the holder holds");
        Await.until(WAIT, () -> SERVER.children(path).size() == 1, "the node of the acquisition that gave up deleted");
        HoldingThread retry = queued(new ZkMutex(retrying, path), path, 2);
        holder.unlock(); // its watch saw the waiters queue: the delete alone
        retry.release(); // granted by the watch on a view of its node alone, and last
        join(retry);
        assertNull(stat(path), "the last holder removed the directory with its node");
    }

    /**
     * The duplicate request of a lock per entity inside one service: two lock objects of one
     * client on one fresh key, the second waiting while the first holds. The first's release is
     * refused by the second's node; the second, granted by its watch on a view of its node alone
     * and the last, removes the directory with its node.
     */
    @Test
    void aDuplicateRequestInOneClientLeavesNoDirectory() throws Exception {
        String path = "/episode/one-client";
        ZkClient service = SERVER.client();
        ZkMutex first = new ZkMutex(service, path);
        first.lock();
        HoldingThread second = queued(new ZkMutex(service, path), path, 2);
        first.unlock();
        second.release();
        join(second);
        assertNull(stat(path), "the last holder removed the directory with its node");
    }

    /**
     * A downgrade on a fresh key, by one client alone: the write hold was granted on a read of its
     * node alone, but when it is released the thread's own read node shares the directory, so
     * the release removes nothing and tries nothing (no refused removal, no contended mark). The
     * key is then the client's alone as before, and its next use removes the directory.
     */
    @Test
    void aDowngradeIsNoContention() throws Exception {
        String path = "/episode/downgrade";
        ZkReadWriteLock rw = new ZkReadWriteLock(SERVER.client(), path);
        rw.writeLock().lock();
        rw.readLock().lock(); // downgrade: held at once beside the write node
        Map<String, String> before = SERVER.flw().mntr();
        rw.writeLock().unlock();
        Map<String, String> after = SERVER.flw().mntr();
        assertEquals(1, CounterWindow.value(after, "zk_cnt_updatelatency")
                - CounterWindow.value(before, "zk_cnt_updatelatency"),
                "the write node's delete alone: the read node is in the directory");
        rw.readLock().unlock();
        assertNotNull(stat(path), "the read hold's view showed the write node: it removes nothing");

        rw.writeLock().lock();
        rw.writeLock().unlock();
        assertNull(stat(path), "used alone again, the key's directory goes with its node");
    }

    // ------------------------------------------------------------------ taking turns

    /** What one handoff cost the server. */
    private record Handoff(long fired, long requests, long writes, long reads) {
    }

    /**
     * {@code k} sessions, each with its own {@link ZkMutex} on {@code path} (fresh: the library
     * makes the directory). Session 0 holds; the others queue one by one; then {@link #HANDOFFS}
     * times: the holder releases once every other session is queued and watching, its successor
     * holds, and the releaser queues again. Each release is measured between two {@code mntr}
     * readings.
     */
    private List<Handoff> takeTurns(String path, int k) throws Exception {
        List<ZkClient> sessions = new ArrayList<>();
        List<ZkMutex> locks = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            sessions.add(SERVER.client());
            locks.add(new ZkMutex(sessions.get(i), path));
        }
        BlockingQueue<HoldingThread> order = new LinkedBlockingQueue<>();
        HoldingThread[] threads = new HoldingThread[k];
        threads[0] = new HoldingThread("session-0", locks.get(0), order::add);
        threads[0].start();
        assertSame(threads[0], order.poll(WAIT.toSeconds(), TimeUnit.SECONDS), "session 0 holds");
        for (int i = 1; i < k; i++) {
            threads[i] = new HoldingThread("session-" + i, locks.get(i), order::add);
            threads[i].start();
            awaitQueue(path, i + 1);
        }
        List<Handoff> handoffs = new ArrayList<>();
        int holder = 0;
        for (int h = 0; h < HANDOFFS; h++) {
            int next = (holder + 1) % k;
            for (ZkClient c : sessions) {
                c.zooKeeper().exists("/", false); // no session is due to ping inside the window
            }
            SERVER.admin().zooKeeper().exists("/", false);
            CounterWindow window = CounterWindow.open(SERVER.flw());
            threads[holder].release();
            join(threads[holder]);
            assertSame(threads[next], order.poll(WAIT.toSeconds(), TimeUnit.SECONDS), "session " + next + " holds");
            window.close();
            Handoff handoff = new Handoff(window.fired(), window.requests(), window.writes(), window.reads());
            log.info("{} sessions, handoff {}: {}", k, h, handoff);
            handoffs.add(handoff);
            assertNotNull(stat(path), "the directory is kept while sessions queue in it");
            threads[holder] = new HoldingThread("session-" + holder, locks.get(holder), order::add);
            threads[holder].start();
            awaitQueue(path, k);
            holder = next;
        }
        threads[holder].release();
        join(threads[holder]);
        for (HoldingThread t : threads) {
            t.release();
        }
        for (HoldingThread t : threads) {
            join(t);
        }
        return handoffs;
    }

    /** Waits until {@code path} holds {@code nodes} nodes and each but the first is watched by its waiter. */
    private void awaitQueue(String path, int nodes) {
        Await.until(WAIT, () -> SERVER.children(path).size() == nodes && SERVER.flw().wchsTotal() == nodes - 1
                && SERVER.flw().watchCount() == nodes - 1, () -> nodes + " nodes in " + path + " and " + (nodes - 1)
                + " data watches; have " + SERVER.children(path).size() + ", " + SERVER.flw().wchsTotal() + " (wchs), "
                + SERVER.flw().watchCount() + " (all)");
    }

    /** Starts a thread taking {@code lock} and waits until its node is the {@code nodes}th in the queue. */
    private HoldingThread queued(ZkMutex lock, String path, int nodes) {
        HoldingThread t = new HoldingThread("waiter", lock, held -> { });
        t.start();
        awaitQueue(path, nodes);
        return t;
    }

    private static void join(HoldingThread t) throws InterruptedException {
        t.join(WAIT.toMillis());
        assertEquals(false, t.isAlive(), t.getName() + " ended");
        assertNull(t.failure(), t.getName() + " failed");
    }

    private Stat stat(String path) throws Exception {
        return SERVER.admin().zooKeeper().exists(path, false);
    }
}
