package io.zkcoord.barrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scenarios of Redisson's {@code RedissonCountDownLatchTest}, written again against {@link
 * ZkCountDownLatch}. Redisson's timed races ("count down after 500 ms, await 550 ms") became
 * orderings the test controls: a wait that must succeed gets a long limit, one that must fail
 * is made before the count-down that would open it.
 */
@Timeout(120)
class PortedRedissonLatchTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private static TestingServer server;
    /** Threads for the members or count-downs that must run at once (one each: they wait for each other). */
    private static final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        pool.shutdownNow();
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).build();
    }

    /** testAwaitTimeout: a waiter with time enough passes when another thread counts the last one down. */
    @Test
    void awaitPassesWhenCountedDownInTime() throws Exception {
        try (ZkClient c = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/ported/latch/in-time");
            assertTrue(latch.trySetCount(1));
            assertEquals(1, latch.getCount());
            CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return latch.await(LONG);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            CompletableFuture.runAsync(latch::countDown).get(LONG.toSeconds(), TimeUnit.SECONDS);
            assertTrue(waiting.get(LONG.toSeconds(), TimeUnit.SECONDS));
        }
    }

    /** testAwaitTimeoutFail: a waiter whose time runs out before the count-down returns false. */
    @Test
    void awaitFailsWhenTimeRunsOutFirst() throws Exception {
        try (ZkClient c = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/ported/latch/too-late");
            assertTrue(latch.trySetCount(1));
            assertEquals(1, latch.getCount());
            assertFalse(latch.await(Duration.ofMillis(500)));
            latch.countDown();
            assertTrue(latch.await(LONG), "open after the count-down");
        }
    }

    /** testMultiAwait: 5 asynchronous waiters in 5 clients, 5 count-downs from another: all 5 pass. */
    @Test
    void fiveAsyncWaitersAllPass() throws Exception {
        List<ZkClient> clients = new ArrayList<>();
        try (ZkClient counter = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(counter, "/ported/latch/multi");
            assertTrue(latch.trySetCount(5));
            List<CompletableFuture<Void>> waits = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ZkClient c = client();
                clients.add(c);
                waits.add(new ZkCountDownLatch(c, "/ported/latch/multi").awaitAsync());
            }
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<Void>> counts = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                counts.add(CompletableFuture.runAsync(() -> {
                    try {
                        assertTrue(go.await(LONG.toSeconds(), TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    latch.countDown();
                }, pool));
            }
            go.countDown();
            for (CompletableFuture<Void> f : counts) {
                f.get(LONG.toSeconds(), TimeUnit.SECONDS);
            }
            for (CompletableFuture<Void> w : waits) {
                w.get(LONG.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(0, latch.getCount());
        } finally {
            clients.forEach(ZkClient::close);
        }
    }

    /** testCountDown: counts down to zero, then a count-down does nothing; absent latches read 0 and are open. */
    @Test
    void countDownToZeroAndBeyond() throws Exception {
        try (ZkClient c = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/ported/latch/count");
            assertTrue(latch.trySetCount(2));
            assertEquals(2, latch.getCount());
            latch.countDown();
            assertEquals(1, latch.getCount());
            latch.countDown();
            assertEquals(0, latch.getCount());
            assertTrue(latch.await(LONG));
            latch.countDown();
            assertEquals(0, latch.getCount(), "nothing below zero");
            assertTrue(latch.await(LONG));

            ZkCountDownLatch one = new ZkCountDownLatch(c, "/ported/latch/count-1");
            assertTrue(one.trySetCount(1));
            one.countDown();
            one.countDown();
            assertEquals(0, one.getCount());
            assertTrue(one.await(LONG));
            assertTrue(one.await(LONG), "awaiting twice");

            ZkCountDownLatch absent = new ZkCountDownLatch(c, "/ported/latch/absent");
            assertEquals(0, absent.getCount());
            assertTrue(absent.await(LONG), "an absent latch is open");
            absent.countDown();
            assertEquals(0, absent.getCount(), "a count-down of an absent latch does nothing");
            assertEquals(null, c.zooKeeper().exists("/ported/latch/absent", false), "and makes nothing");
        }
    }

    /** testTrySetCount: arms once; false while the count runs. */
    @Test
    void trySetCountOnlyWhenNotRunning() {
        try (ZkClient c = client()) {
            ZkCountDownLatch latch = new ZkCountDownLatch(c, "/ported/latch/try-set");
            assertTrue(latch.trySetCount(1));
            assertFalse(latch.trySetCount(2));
            assertEquals(1, latch.getCount());
        }
    }

    /** testCount: a latch never armed has count 0. */
    @Test
    void neverArmedCountsZero() {
        try (ZkClient c = client()) {
            assertEquals(0, new ZkCountDownLatch(c, "/ported/latch/never").getCount());
        }
    }
}
