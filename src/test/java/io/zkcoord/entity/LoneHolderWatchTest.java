package io.zkcoord.entity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.CounterWindow;
import io.zkcoord.testing.HoldingThread;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lone holder's watch ({@code io.zkcoord.queue.LoneHolds}), against a real server, counted from
 * its own counters ({@code mntr}: writes {@code zk_cnt_updatelatency}, requests, notifications;
 * child watches as {@code zk_watch_count} less the data watches of {@code wchs}):
 * <ul>
 *   <li>a holder granted alone on a fresh key holds exactly one child watch, on its directory, set
 *       by the read that granted: its cycle is 3 requests and 2 writes, and leaves no directory and
 *       no watch;
 *   <li>a waiter's create tells it (its watch is gone once the waiter is queued), and the handoff
 *       is 1 write and 1 notification; so is the next handoff, back to the first holder queued
 *       again, whose grant came from a stale view: no refused removal in the first episode;
 *   <li>a waiter that gave up does not cost the directory: the holder's release, told of it,
 *       reads the queue, finds its node alone, and removes the directory with it.
 * </ul>
 * The container reaper is held off, so every removal seen is the library's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LoneHolderWatchTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final ReaperlessServer SERVER = new ReaperlessServer(Duration.ofSeconds(60));

    /** The child watches the server holds: all watches less the data watches. */
    private static long childWatches() {
        return SERVER.flw().watchCount() - SERVER.flw().wchsTotal();
    }

    /** A fresh key held alone: one child watch while held; 3 requests and 2 writes for the cycle; nothing left. */
    @Test
    void aLoneHolderOfAFreshKeyWatchesItsDirectory() throws Exception {
        String path = "/lone/fresh";
        ZkMutex mutex = new ZkMutex(SERVER.client(), path);
        mutex.lock(); // the client's session is up, the parent made; not counted
        mutex.unlock();
        assertNull(stat(path));

        touch();
        CounterWindow cycle = CounterWindow.open(SERVER.flw());
        mutex.lock();
        mutex.unlock();
        cycle.close();
        assertEquals(3, cycle.requests(), "create with its directory, the read that set the watch, the removal");
        assertEquals(2, cycle.writes(), "the create's transaction and the removal's");
        assertNull(stat(path), "the release removed the directory with its node");

        mutex.lock();
        assertEquals(1, childWatches(), "the lone holder watches its directory's children");
        assertEquals(0, SERVER.flw().wchsTotal(), "and nothing else");
        mutex.unlock();
        assertNull(stat(path), "the release removed the directory with its node");
        Await.until(WAIT, () -> SERVER.flw().watchCount() == 0, () -> "no watch left; have "
                + SERVER.flw().watchCount());
    }

    /**
     * A waiter's create tells the lone holder; both handoffs of the first episode (to the waiter,
     * then back to the first holder queued again) are 1 write and 1 notification.
     */
    @Test
    void theFirstEpisodeCostsOneWritePerHandoff() throws Exception {
        String path = "/lone/episode";
        ZkClient a = SERVER.client();
        ZkClient b = SERVER.client();
        BlockingQueue<HoldingThread> order = new LinkedBlockingQueue<>();
        HoldingThread first = new HoldingThread("a", new ZkMutex(a, path), order::add);
        first.start();
        assertSame(first, order.poll(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(1, childWatches(), "the lone holder watches its directory");

        HoldingThread second = new HoldingThread("b", new ZkMutex(b, path), order::add);
        second.start();
        awaitQueue(path);
        assertEquals(0, childWatches(), "the waiter's create fired the holder's watch");

        touch();
        CounterWindow toWaiter = CounterWindow.open(SERVER.flw());
        first.release();
        assertSame(second, order.poll(WAIT.toSeconds(), TimeUnit.SECONDS));
        toWaiter.close();
        assertEquals(1, toWaiter.writes(), "the holder's delete alone: no refused removal");
        assertEquals(1, toWaiter.fired(), "one notification, to the waiter");
        join(first);

        HoldingThread again = new HoldingThread("a again", new ZkMutex(a, path), order::add);
        again.start();
        awaitQueue(path);
        touch();
        CounterWindow back = CounterWindow.open(SERVER.flw());
        second.release();
        assertSame(again, order.poll(WAIT.toSeconds(), TimeUnit.SECONDS));
        back.close();
        assertEquals(1, back.writes(), "granted on a stale view of its node alone, it read the queue: its delete"
                + " alone, no refused removal");
        assertEquals(1, back.fired(), "one notification, to the waiter");
        join(second);
        again.release();
        join(again);
        assertEquals(0, SERVER.children(path).size(), "no node left");
    }

    /** A waiter that gave up while the lone holder held: the holder still removes the directory. */
    @Test
    void aWaiterThatGaveUpDoesNotCostTheDirectory() throws Exception {
        String path = "/lone/gave-up";
        ZkMutex holder = new ZkMutex(SERVER.client(), path);
        ZkMutex polling = new ZkMutex(SERVER.client(), path);
        holder.lock();
        assertEquals(false, polling.tryLock(), "held");
        Await.until(WAIT, () -> SERVER.children(path).size() == 1, "the node of the look that did not hold deleted");
        assertEquals(0, childWatches(), "the look's create told the holder");
        holder.unlock();
        assertNull(stat(path), "the holder read its node alone and removed the directory with it");
    }

    /** Waits until {@code path} holds 2 nodes and the second's waiter watches the first (a data watch). */
    private void awaitQueue(String path) {
        Await.until(WAIT, () -> SERVER.children(path).size() == 2 && SERVER.flw().wchsTotal() == 1,
                () -> "2 nodes in " + path + " and one data watch; have " + SERVER.children(path).size() + ", "
                        + SERVER.flw().wchsTotal());
        Await.until(WAIT, () -> childWatches() == 0, () -> "child watches: " + childWatches());
    }

    /** No session is due to ping inside a window. */
    private static void touch() throws Exception {
        SERVER.admin().zooKeeper().exists("/", false);
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
