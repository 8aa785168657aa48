package io.zkcoord.barrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The latch, the barrier and the double barrier against a real server. */
@Timeout(120)
class BarriersTest {

    private static TestingServer server;
    private static FourLetterWords flw;

    @BeforeAll
    static void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        flw = FourLetterWords.of(server.getConnectString());
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).build();
    }

    /** Arm, count down exactly, open; false while a count runs; nothing at zero; re-armed after open. */
    @Test
    void latchCountsDownAndReArms() throws Exception {
        try (ZkClient c = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/latch/basic");
            assertEquals(0, latch.getCount());
            assertTrue(latch.await(Duration.ZERO), "an absent latch is open");
            assertTrue(latch.trySetCount(2));
            assertFalse(latch.trySetCount(5), "a count runs");
            assertEquals(2, latch.getCount());
            assertFalse(latch.await(Duration.ofMillis(100)));
            latch.countDown();
            assertEquals(1, latch.getCount());
            latch.countDown();
            assertEquals(0, latch.getCount());
            assertTrue(latch.await(Duration.ZERO));
            latch.countDown();
            assertEquals(0, latch.getCount(), "nothing at zero");
            assertTrue(latch.trySetCount(1), "re-armed once open");
            assertEquals(1, latch.getCount());
            assertThrows(IllegalArgumentException.class, () -> latch.trySetCount(0));
        }
    }

    /** A waiter of a round that opened returns true even if the latch was re-armed before it looked again. */
    @Test
    void lateWaiterOfAnOldRoundPasses() throws Exception {
        try (ZkClient a = client(); ZkClient b = client()) {
            ZkCountDownLatch la = new ZkCountDownLatch(a, "/latch/rounds");
            ZkCountDownLatch lb = new ZkCountDownLatch(b, "/latch/rounds");
            assertTrue(la.trySetCount(1));
            CompletableFuture<Void> waiting = lb.awaitAsync();
            Await.until("the waiter watches", Duration.ofSeconds(10), () -> flw.watchCount() >= 1);
            la.countDown();
            assertTrue(la.trySetCount(3), "re-armed at once");
            waiting.get(20, TimeUnit.SECONDS);
            assertEquals(3, lb.getCount());
        }
    }

    /** N waiters in N sessions: opening costs N notifications; the count-downs before it none. */
    @Test
    void openingCostsOneNotificationPerWaiter() throws Exception {
        int n = 4;
        List<ZkClient> cs = new ArrayList<>();
        try (ZkClient arm = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(arm, "/latch/herd");
            assertTrue(latch.trySetCount(3));
            long watchesBefore = flw.watchCount();
            List<CompletableFuture<Void>> waits = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ZkClient c = client();
                cs.add(c);
                waits.add(new ZkCountDownLatch(c, "/latch/herd").awaitAsync());
            }
            Await.until("each waiter holds one watch", Duration.ofSeconds(10),
                    () -> flw.watchCount() == watchesBefore + n);
            long firedBefore = flw.watchesFired();
            latch.countDown();
            latch.countDown();
            assertEquals(firedBefore, flw.watchesFired(), "count-downs before the last notify nobody");
            latch.countDown();
            for (CompletableFuture<Void> w : waits) {
                w.get(20, TimeUnit.SECONDS);
            }
            assertEquals(firedBefore + n, flw.watchesFired(), "one notification per waiter");
            assertEquals(watchesBefore, flw.watchCount(), "no watch left");
        } finally {
            cs.forEach(ZkClient::close);
        }
    }

    /** A waiter whose time runs out leaves no watch and no node. */
    @Test
    void timedOutWaitersLeaveNothing() throws Exception {
        try (ZkClient c = client()) {
            long before = flw.watchCount();
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/latch/timeout");
            assertTrue(latch.trySetCount(1));
            List<String> children = c.zooKeeper().getChildren("/latch/timeout", false);
            assertFalse(latch.await(Duration.ofMillis(200)));
            assertFalse(latch.await(Duration.ofMillis(50)));
            ZkBarrier barrier = new ZkBarrier(c, "/barrier/timeout");
            barrier.set();
            assertFalse(barrier.await(Duration.ofMillis(200)));
            Await.until("no watch left", Duration.ofSeconds(10), () -> flw.watchCount() == before);
            assertEquals(children, c.zooKeeper().getChildren("/latch/timeout", false), "no node left");
        }
    }

    /** Barrier: none raised passes at once; raised, waiters wait; removed, they all pass, one notification each. */
    @Test
    void barrierSetAwaitRemove() throws Exception {
        try (ZkClient a = client(); ZkClient b = client(); ZkClient c = client()) {
            ZkBarrier ba = new ZkBarrier(a, "/barrier/basic/gate");
            assertTrue(ba.await(Duration.ZERO));
            ba.set();
            ba.set();
            List<CompletableFuture<Boolean>> waits = new ArrayList<>();
            for (ZkClient x : List.of(b, c)) {
                ZkBarrier bx = new ZkBarrier(x, "/barrier/basic/gate");
                waits.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return bx.await(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            Await.until("both watch", Duration.ofSeconds(10), () -> flw.watchCount() >= 2);
            // a spurious wake-up: the barrier's data changes; nobody may pass
            a.zooKeeper().setData("/barrier/basic/gate", new byte[] {1}, -1);
            Await.until("both watch again", Duration.ofSeconds(10), () -> flw.watchCount() >= 2);
            assertFalse(waits.get(0).isDone() || waits.get(1).isDone(), "passed on a data change");
            ba.remove();
            ba.remove();
            for (CompletableFuture<Boolean> w : waits) {
                assertTrue(w.get(20, TimeUnit.SECONDS));
            }
        }
    }

    /** Three members enter together and leave together; nothing is left but the barrier's node. */
    @Test
    void doubleBarrierEntersAndLeavesTogether() throws Exception {
        int n = 3;
        List<ZkClient> cs = new ArrayList<>();
        try {
            List<CompletableFuture<Boolean>> runs = new ArrayList<>();
            List<Long> entered = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Long> leftAt = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger maxInsideBeforeAll = new java.util.concurrent.atomic.AtomicInteger();
            for (int i = 0; i < n; i++) {
                ZkClient c = client();
                cs.add(c);
                ZkDoubleBarrier member = new ZkDoubleBarrier(c, "/double/basic", n);
                int me = i;
                runs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        if (me > 0) {
                            Await.until("the previous member is in", Duration.ofSeconds(20), () -> inside.get() >= 0);
                        }
                        if (!member.enter(Duration.ofSeconds(30))) {
                            return false;
                        }
                        entered.add(System.nanoTime());
                        inside.incrementAndGet();
                        boolean left = member.leave(Duration.ofSeconds(30));
                        leftAt.add(System.nanoTime());
                        maxInsideBeforeAll.accumulateAndGet(inside.get(), Math::max);
                        return left;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (CompletableFuture<Boolean> r : runs) {
                assertTrue(r.get(60, TimeUnit.SECONDS));
            }
            assertEquals(n, maxInsideBeforeAll.get(), "nobody left before all had entered");
            assertEquals(List.of(), cs.get(0).zooKeeper().getChildren("/double/basic", false));
        } finally {
            cs.forEach(ZkClient::close);
        }
    }

    /** enter times out: false, this member's node removed, no watch left; the barrier works on. */
    @Test
    void doubleBarrierEnterTimesOutCleanly() throws Exception {
        try (ZkClient c = client()) {
            long before = flw.watchCount();
            ZkDoubleBarrier member = new ZkDoubleBarrier(c, "/double/timeout", 2);
            assertFalse(member.enter(Duration.ofMillis(300)));
            assertEquals(List.of(), c.zooKeeper().getChildren("/double/timeout", false));
            Await.until("no watch left", Duration.ofSeconds(10), () -> flw.watchCount() == before);
            assertThrows(IllegalStateException.class, () -> member.leave(Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> new ZkDoubleBarrier(c, "/double/x", 0));
        }
    }

    /** Leaving: a spurious wake-up (the watched member's data changes) lets nobody through; a member whose session ends counts as gone. */
    @Test
    void doubleBarrierLeaveSpuriousWakeUpAndDeadMember() throws Exception {
        try (ZkClient a = client(); ZkClient b = client()) {
            ZkClient dying = client();
            ZkDoubleBarrier ma = new ZkDoubleBarrier(a, "/double/leave", 3);
            ZkDoubleBarrier mb = new ZkDoubleBarrier(b, "/double/leave", 3);
            ZkDoubleBarrier md = new ZkDoubleBarrier(dying, "/double/leave", 3);
            List<CompletableFuture<Boolean>> enters = new ArrayList<>();
            for (ZkDoubleBarrier m : List.of(ma, mb, md)) {
                enters.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return m.enter(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (CompletableFuture<Boolean> e : enters) {
                assertTrue(e.get(30, TimeUnit.SECONDS));
            }
            List<CompletableFuture<Boolean>> leaves = new ArrayList<>();
            for (ZkDoubleBarrier m : List.of(ma, mb)) {
                leaves.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return m.leave(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            Await.until("the leavers wait", Duration.ofSeconds(10), () -> flw.watchCount() >= 1);
            for (String child : a.zooKeeper().getChildren("/double/leave", false)) {
                if (child.startsWith("member-")) {
                    a.zooKeeper().setData("/double/leave/" + child, new byte[] {1}, -1); // spurious wake-ups
                }
            }
            Thread.onSpinWait();
            assertFalse(leaves.get(0).isDone() || leaves.get(1).isDone(), "passed while a member is inside");
            dying.close(); // its session ends: its node goes, and it counts as gone
            for (CompletableFuture<Boolean> l : leaves) {
                assertTrue(l.get(30, TimeUnit.SECONDS));
            }
        }
    }
}
