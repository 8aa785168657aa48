package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.LockLostException;
import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.test.FencedResource;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Op;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Session expiries and connection cuts in a mixed fleet (Curator's {@code InterProcessMutex} and
 * {@code ZkMutex} with {@code Protocol.CURATOR}), judged by a ledger that keeps Curator's known
 * faults apart from ours.
 *
 * <p><b>How the ledger tells them apart.</b> When two parties are inside at once, the one whose
 * session the server had ended (its node gone) is the stale one. If it is a zkcoord holder, it must
 * have been told (its {@code LockLossListener} fired, and {@code commitIfHeld} refuses): if not, the
 * fault is ours. If it is a Curator holder, Curator's mutex has no way to tell it (only the
 * framework's connection-state listener hears {@code LOST}; {@code isAcquiredInThisProcess()}
 * stays true): that overlap is recorded as Curator's known fault, not counted against us.
 */
class MixedFleetFaultsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    /** What the scenarios found: faults of ours, and Curator's own, apart. Thread-safe. */
    private static final class Ledger {
        final List<String> ours = Collections.synchronizedList(new ArrayList<>());
        final List<String> curators = Collections.synchronizedList(new ArrayList<>());
    }

    /**
     * A Curator holder's session expires on the server: our waiter (next in the queue) holds, and
     * writes with its token. The Curator holder was not told: {@code isAcquiredInThisProcess()} is
     * still true beside our holder. Recorded as Curator's fault; nothing is recorded against us.
     */
    @Test
    void curatorHolderExpiresAndIsNotTold() throws Exception {
        String dir = "/faults/curator-holder";
        Ledger ledger = new Ledger();
        FencedResource resource = new FencedResource();
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            CuratorFramework c = fleet.curator();
            InterProcessMutex curatorMutex = new InterProcessMutex(c, dir);
            assertTrue(curatorMutex.acquire(10, TimeUnit.SECONDS));
            ZkMutex ours = new ZkMutex(fleet.zkcoord(), dir, Protocol.CURATOR);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                CountDownLatch oursInside = new CountDownLatch(1);
                CountDownLatch done = new CountDownLatch(1);
                Future<Boolean> waiter = pool.submit(() -> {
                    ours.lock();
                    try {
                        oursInside.countDown();
                        boolean accepted;
                        try {
                            resource.write(ours.fencingToken(), "ours after the expiry");
                            accepted = true;
                        } catch (IllegalStateException stale) {
                            accepted = false;
                        }
                        done.await();
                        return accepted;
                    } finally {
                        ours.unlock();
                    }
                });
                Await.until(WAIT, () -> children(c, dir) == 2, "our waiter queued behind the Curator holder");
                SessionExpiry.expireOnServer(c.getZookeeperClient().getZooKeeper(), server.getConnectString(), WAIT);
                assertTrue(oursInside.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "our waiter holds after the expiry");
                if (curatorMutex.isAcquiredInThisProcess()) {
                    ledger.curators.add("Curator holder of " + dir + " not told of its expiry: it still believes it"
                            + " holds beside our holder");
                }
                done.countDown();
                if (!waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    ledger.ours.add("our holder after the expiry was refused by the resource");
                }
            } finally {
                pool.shutdownNow();
            }
        }
        assertEquals(List.of(), ledger.ours);
        assertEquals(1, ledger.curators.size(), "Curator's known fault is recorded as Curator's");
    }

    /**
     * Our holder's session expires on the server: it is told (loss listener, with its token), its
     * guarded commit is refused, and the Curator waiter behind it holds. Nothing is recorded against
     * either library.
     */
    @Test
    void ourHolderExpiresAndIsTold() throws Exception {
        String dir = "/faults/our-holder";
        Ledger ledger = new Ledger();
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            ZkClient z = fleet.zkcoord();
            ZkMutex ours = new ZkMutex(z, dir, Protocol.CURATOR);
            AtomicLong toldToken = new AtomicLong(-1);
            ours.addLossListener((lock, token) -> toldToken.set(token));
            ours.lock();
            long token = ours.fencingToken();
            CuratorFramework c = fleet.curator();
            InterProcessMutex curatorMutex = new InterProcessMutex(c, dir);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<Boolean> curatorWaiter = pool.submit(() -> {
                    boolean held = curatorMutex.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    if (held) {
                        curatorMutex.release();
                    }
                    return held;
                });
                Await.until(WAIT, () -> children(c, dir) == 2, "the Curator waiter queued behind our holder");
                SessionExpiry.expireOnServer(z.zooKeeper(), server.getConnectString(), WAIT);
                assertTrue(curatorWaiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the Curator waiter holds");
                Await.until(WAIT, () -> toldToken.get() == token, "our holder is told of its loss, with its token");
                assertFalse(ours.isHeldByCurrentThread());
                assertThrows(LockLostException.class, () -> ours.commitIfHeld(List.of(Op.check("/", -1))),
                        "a guarded commit of the lost hold applies nothing");
                ours.unlock();
            } finally {
                pool.shutdownNow();
            }
        }
        assertEquals(List.of(), ledger.ours);
        assertEquals(List.of(), ledger.curators);
    }

    /**
     * Our waiter's connection is cut (its session survives): it keeps its place, and holds before
     * a Curator client that queued after it, once the Curator holder ahead releases. FIFO across
     * the cut.
     */
    @Test
    void connectionCutKeepsOurPlaceInTheQueue() throws Exception {
        String dir = "/faults/cut";
        try (Fleet fleet = new Fleet(server.getConnectString());
                ZkProxy proxy = ZkProxy.to(server.getConnectString())) {
            CuratorFramework first = fleet.curator();
            InterProcessMutex firstMutex = new InterProcessMutex(first, dir);
            assertTrue(firstMutex.acquire(10, TimeUnit.SECONDS));
            ZkMutex ours = new ZkMutex(fleet.zkcoord(proxy.connectString()), dir, Protocol.CURATOR);
            List<String> order = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<?> oursRun = pool.submit(() -> {
                    ours.lock();
                    order.add("zkcoord");
                    ours.unlock();
                    return null;
                });
                Await.until(WAIT, () -> children(first, dir) == 2, "our waiter queued");
                InterProcessMutex lateMutex = new InterProcessMutex(fleet.curator(), dir);
                Future<?> lateRun = pool.submit(() -> {
                    lateMutex.acquire();
                    order.add("curator-late");
                    lateMutex.release();
                    return null;
                });
                Await.until(WAIT, () -> children(first, dir) == 3, "the late Curator client queued");
                assertTrue(proxy.cutAll() > 0, "our connection was cut");
                firstMutex.release();
                oursRun.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                lateRun.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } finally {
                pool.shutdownNow();
            }
            assertEquals(List.of("zkcoord", "curator-late"), order);
        }
    }

    private static int children(CuratorFramework c, String dir) {
        try {
            return c.getChildren().forPath(dir).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
