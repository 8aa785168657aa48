package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The multi-lock when things go wrong around it: a node of a waiter deleted by hand in another
 * queue (the attempt is void, never granted beside a new holder), a lost create reply followed by
 * such a deletion (no orphan, no waiter stuck behind its own node), one directory of several
 * missing, and a session lost while holding. The first two failed before the fixes (found by
 * review).
 */
@Timeout(90)
class MultiLockFailureTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private ZkTestEnsemble ensemble;
    private ZkClient client;
    private ZkClient other;
    private ZkClient third;
    private ZkClient observer;

    /** Every test has a server of its own ({@code @ZkEnsemble} on the method): the paths are the same in each. */
    @BeforeEach
    void start(ZkTestEnsemble ensemble, ZkClient client, ZkClient other, ZkClient third, ZkClient observer) {
        this.ensemble = ensemble;
        this.client = client;
        this.other = other;
        this.third = third;
        this.observer = observer;
    }

    /**
     * Finding 1. A waiter whose node in one directory is deleted by hand while it waits in another
     * directory must not hold (docs/herd-effect.md section 13, "Failures": the attempt is void, the
     * other nodes are deleted and the acquisition queues again). It waits in /h/a on the mutex's
     * node with heldWhenGone (because /h/b held at its last read), so when that node goes it is
     * granted without a new read, although its /h/b node is gone and a mutex holds /h/b: two
     * holders of /h/b.
     */
    @Test
    @ZkEnsemble
    void handDeletedNodeInAnotherQueueIsNotGrantedBeside() throws Exception {
        ZkLease onA = new ZkMutex(other, "/h/a").acquire();
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/h/a", "/h/b"));
        CompletableFuture<ZkLease> waiting = multi.acquireAsync();
        Await.until("queued in both", WAIT, () -> multiNodes("/h/a", "/h/b").size() == 2);
        // Its node in /h/b is first there (held in that queue); it watches the mutex's node in /h/a.
        String inB = multiNodes("/h/b").get(0);
        observer.zooKeeper().delete(inB, -1);
        ZkLease onB = new ZkMutex(third, "/h/b").acquire(); // /h/b is free: the mutex holds it
        onA.release();
        // The multi-lock either holds (wrongly, beside the mutex on /h/b) or queues again in /h/b
        // behind that mutex (right).
        Await.until("the multi-lock held or queued again", WAIT,
                () -> waiting.isDone() || !multiNodes("/h/b").isEmpty());
        try {
            assertFalse(waiting.isDone() && onB.isValid(),
                    "the multi-lock holds /h/b while the mutex on /h/b holds it too: " + children("/h/b"));
        } finally {
            waiting.cancel(false);
            if (waiting.isDone() && !waiting.isCancelled()) {
                waiting.join().release();
            }
            onB.release();
        }
    }

    /**
     * Finding 2. The reply to the create multi is lost and, before the client reconnects, one of
     * the attempt's nodes is deleted by hand. The recovery then finds the attempt in some
     * directories only, logs a warning and creates again without deleting the nodes it found: the
     * orphan in /r/a is ephemeral in the live session and first in its queue, so the new attempt
     * waits behind its own orphan until the session ends (a stuck waiter), and every other locker
     * of /r/a waits with it.
     */
    @Test
    @ZkEnsemble
    void lostCreateReplyWithOneNodeGoneLeavesNoOrphan() throws Exception {
        // The module has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString());
             ZkClient cutOff = MultiLockNodes.client(proxy.connectString())) {
            ZkMultiLock multi = new ZkMultiLock(cutOff, List.of("/r/a", "/r/b"));
            multi.acquire().release(); // directories made, the client's connection in steady state
            CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
            CompletableFuture<ZkLease> granted = multi.acquireAsync();
            cut.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            // The client reconnects after at least its 1 s spin delay; hold the reconnection until
            // the hand deletion is done. (Had it reconnected already, the test would pass, not fail.)
            proxy.stall();
            assertEquals(1, multiNodes("/r/a").size());
            assertEquals(1, multiNodes("/r/b").size());
            observer.zooKeeper().delete(multiNodes("/r/b").get(0), -1);
            proxy.heal();
            try {
                ZkLease lease = granted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                lease.release();
            } catch (TimeoutException e) {
                throw new AssertionError("not granted after " + WAIT + "; nodes: /r/a " + children("/r/a") + ", /r/b "
                        + children("/r/b") + " (the first attempt's node in /r/a is an orphan the new attempt waits"
                        + " behind)", e);
            } finally {
                granted.cancel(false);
            }
            Await.until("nothing left", WAIT, () -> multiNodes("/r/a", "/r/b").isEmpty());
        }
    }

    /** Checked: one directory exists, the other not (the create multi fails NONODE): held, nothing extra left. */
    @Test
    @ZkEnsemble
    void oneDirectoryMissingIsCreatedAndHeld() throws Exception {
        observer.zooKeeper().create("/d", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        observer.zooKeeper().create("/d/here", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/d/here", "/d/new/deep"));
        assertTrue(multi.tryLock(5, TimeUnit.SECONDS));
        assertEquals(1, multiNodes("/d/here").size());
        assertEquals(1, multiNodes("/d/new/deep").size());
        multi.unlock();
        assertEquals(List.of(), multiNodes("/d/here", "/d/new/deep"));
    }

    /**
     * Checked: the session of a holding multi-lock expires: one loss report with the shared token,
     * unlock does not throw, a mutex gets each path, and the lock can be taken again.
     */
    @Test
    @ZkEnsemble
    void sessionLossWhileHoldingIsReportedOnce() throws Exception {
        ZkMultiLock multi = new ZkMultiLock(client, List.of("/s/a", "/s/b"));
        List<Long> lost = new CopyOnWriteArrayList<>();
        multi.addLossListener((lock, token) -> lost.add(token));
        multi.lock();
        long token = multi.fencingToken();
        ensemble.expireSession(client);
        Await.until("loss reported", WAIT, () -> !lost.isEmpty());
        assertFalse(multi.isHeldByCurrentThread());
        multi.unlock();
        assertEquals(List.of(token), lost);
        for (String p : List.of("/s/a", "/s/b")) {
            new ZkMutex(other, p).acquire().release();
        }
        assertTrue(multi.tryLock(5, TimeUnit.SECONDS));
        assertTrue(multi.fencingToken() > token);
        multi.unlock();
        assertEquals(List.of(), multiNodes("/s/a", "/s/b"));
    }

    // ------------------------------------------------------------------ helpers

    private List<String> children(String path) {
        return new MultiLockNodes(observer).children(path);
    }

    private List<String> multiNodes(String... dirs) {
        return new MultiLockNodes(observer).multiNodes(dirs);
    }

}
