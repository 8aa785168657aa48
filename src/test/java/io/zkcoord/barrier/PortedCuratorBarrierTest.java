package io.zkcoord.barrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scenarios of Curator's {@code TestDistributedBarrier} and {@code
 * TestDistributedDoubleBarrier}, written again against {@link ZkBarrier} and {@link
 * ZkDoubleBarrier} where they mean the same. Curator's fixed sleeps ("remove after 1 s") became
 * waits on a condition; its untimed waits became timed ones (our API only has those).
 */
@Timeout(120)
class PortedCuratorBarrierTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private static TestingServer server;
    /** Threads for the members or count-downs that must run at once (one each: they wait for each other). */
    private static final ExecutorService pool = Executors.newCachedThreadPool();
    private static FourLetterWords flw;

    @BeforeAll
    static void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        flw = FourLetterWords.of(server.getConnectString());
    }

    @AfterAll
    static void stopServer() throws Exception {
        pool.shutdownNow();
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).build();
    }

    private static CompletableFuture<Boolean> awaitAsync(ZkBarrier barrier, Duration timeout) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return barrier.await(timeout);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    // ---- TestDistributedBarrier ----

    /** testBasic: raised, then removed by another thread while we wait: the wait ends true. */
    @Test
    void barrierBasic() throws Exception {
        try (ZkClient c = client()) {
            ZkBarrier barrier = new ZkBarrier(c, "/ported/barrier/basic");
            barrier.set();
            CompletableFuture<Boolean> waiting = awaitAsync(barrier, LONG);
            assertFalse(barrier.await(Duration.ofMillis(200)), "still raised");
            barrier.remove();
            assertTrue(waiting.get(LONG.toSeconds(), TimeUnit.SECONDS));
        }
    }

    /** testNoBarrier: no barrier raised: the wait passes at once (and again). */
    @Test
    void barrierNotRaisedPassesAtOnce() throws Exception {
        try (ZkClient c = client()) {
            ZkBarrier barrier = new ZkBarrier(c, "/ported/barrier/none");
            assertTrue(barrier.await(Duration.ofSeconds(10)));
            assertTrue(awaitAsync(barrier, LONG).get(LONG.toSeconds(), TimeUnit.SECONDS));
        }
    }

    /** testMultiClient: raised by one client, two others wait, a fourth removes it: both pass. */
    @Test
    void barrierMultiClient() throws Exception {
        try (ZkClient setter = client(); ZkClient a = client(); ZkClient b = client(); ZkClient remover = client()) {
            new ZkBarrier(setter, "/ported/barrier/multi").set();
            List<CompletableFuture<Boolean>> waits = List.of(awaitAsync(new ZkBarrier(a, "/ported/barrier/multi"), LONG),
                    awaitAsync(new ZkBarrier(b, "/ported/barrier/multi"), LONG));
            assertFalse(new ZkBarrier(remover, "/ported/barrier/multi").await(Duration.ofMillis(200)));
            new ZkBarrier(remover, "/ported/barrier/multi").remove();
            for (CompletableFuture<Boolean> w : waits) {
                assertTrue(w.get(LONG.toSeconds(), TimeUnit.SECONDS));
            }
        }
    }

    /**
     * testServerCrash: the server goes away while a waiter waits. Curator throws {@code
     * ConnectionLossException}; ours never passes without the ensemble's word: the wait ends by
     * its deadline with false, or with {@link CoordinationException} once the retry policy gives
     * up, and never later than its deadline (plus the 200 ms it may take to drop its watch).
     */
    @Test
    void barrierServerCrashNeverPasses() throws Exception {
        try (TestingServer own = new TestingServer(true);
             ZkClient c = ZkClient.builder().connectString(own.getConnectString())
                     .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(100), 5)).build()) {
            ZkBarrier barrier = new ZkBarrier(c, "/ported/barrier/crash");
            barrier.set();
            Duration limit = Duration.ofSeconds(3);
            CompletableFuture<Boolean> waiting = awaitAsync(barrier, limit);
            FourLetterWords flw = FourLetterWords.of(own.getConnectString());
            Await.until("the waiter watches the barrier", LONG, () -> flw.wchp().containsKey("/ported/barrier/crash"));
            own.stop();
            try {
                assertFalse(waiting.get(limit.toMillis() + 10_000, TimeUnit.MILLISECONDS), "passed with no server");
            } catch (java.util.concurrent.ExecutionException e) {
                assertInstanceOf(CoordinationException.class, e.getCause(), e.getCause().toString());
            }
        }
    }

    // ---- TestDistributedDoubleBarrier ----

    private static final int QTY = 5;

    /** testBasic (5 threads on one client) and testMultiClient (5 clients): all enter together, all leave together. */
    @Test
    void doubleBarrierFiveThreadsOneClient() throws Exception {
        try (ZkClient c = client()) {
            List<ZkClient> clients = new ArrayList<>();
            for (int i = 0; i < QTY; i++) {
                clients.add(c);
            }
            enterCountLeave(clients, "/ported/double/one-client");
        }
    }

    /** testMultiClient: each member its own client (session). */
    @Test
    void doubleBarrierFiveClients() throws Exception {
        List<ZkClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < QTY; i++) {
                clients.add(client());
            }
            enterCountLeave(clients, "/ported/double/clients");
        } finally {
            clients.forEach(ZkClient::close);
        }
    }

    /** Each member: enter, count itself in, wait until all are in, check all are, leave, count out. */
    private static void enterCountLeave(List<ZkClient> clients, String path) throws Exception {
        AtomicInteger count = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        CountDownLatch allIn = new CountDownLatch(clients.size());
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (ZkClient c : clients) {
            ZkDoubleBarrier member = new ZkDoubleBarrier(c, path, clients.size());
            runs.add(CompletableFuture.runAsync(() -> {
                try {
                    assertTrue(member.enter(LONG));
                    max.accumulateAndGet(count.incrementAndGet(), Math::max);
                    allIn.countDown();
                    assertTrue(allIn.await(LONG.toSeconds(), TimeUnit.SECONDS));
                    assertEquals(clients.size(), count.get(), "nobody left before all had entered");
                    assertTrue(member.leave(LONG));
                    count.decrementAndGet();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, pool));
        }
        for (CompletableFuture<Void> r : runs) {
            r.get(90, TimeUnit.SECONDS);
        }
        assertEquals(0, count.get());
        assertEquals(clients.size(), max.get());
        assertTrue(clients.get(0).zooKeeper().getChildren(path, false).stream().noneMatch(n -> n.startsWith("member-")),
                "no member node left");
    }

    /**
     * testOverSubscribed: QTY + 1 members on a barrier of QTY, all trying to enter at once. Curator
     * holds them at the start with a hook in the recipe; ours has none, so they are released
     * together by a latch. Every one of them enters (the ready node lets a late one through) and
     * leaves.
     */
    @Test
    void doubleBarrierOverSubscribed() throws Exception {
        try (ZkClient c = client()) {
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<Boolean>> runs = new ArrayList<>();
            for (int i = 0; i < QTY + 1; i++) {
                ZkDoubleBarrier member = new ZkDoubleBarrier(c, "/ported/double/over", QTY);
                runs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        assertTrue(go.await(LONG.toSeconds(), TimeUnit.SECONDS));
                        return member.enter(LONG) && member.leave(LONG);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            go.countDown();
            for (CompletableFuture<Boolean> r : runs) {
                assertTrue(r.get(90, TimeUnit.SECONDS));
            }
            assertTrue(c.zooKeeper().getChildren("/ported/double/over", false).stream()
                    .noneMatch(n -> n.startsWith("member-")), "no member node left");
        }
    }

    /**
     * The spurious wake-up of Curator's enter (CURATOR-1290's kind): a member waits to enter while
     * its connection is cut twice (the watcher hears Disconnected and SyncConnected, which are
     * not the ready node's creation). It must still be waiting after each reconnection, and pass
     * only once the second member has come.
     */
    @Test
    void doubleBarrierEnterIgnoresSpuriousWakeUps() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient cutOff = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(30)).build();
             ZkClient other = client()) {
            ZkDoubleBarrier first = new ZkDoubleBarrier(cutOff, "/ported/double/spurious", 2);
            CompletableFuture<Boolean> entering = CompletableFuture.supplyAsync(() -> {
                try {
                    return first.enter(LONG);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Await.until("the first member waits on the ready node", LONG,
                    () -> flw.wchp().containsKey("/ported/double/spurious/ready"));
            for (int i = 0; i < 2; i++) {
                int connections = proxy.connectionsAccepted();
                proxy.cutAll();
                Await.until("reconnected", LONG, () -> proxy.connectionsAccepted() > connections && cutOff.state().isConnected());
                // A round trip after the reconnection: the waiter's own re-check was sent before it.
                cutOff.zooKeeper().exists("/ported/double/spurious", false);
                assertFalse(entering.isDone(), "entered with 1 of 2 members, on a wake-up that was not the ready node");
            }
            assertTrue(new ZkDoubleBarrier(other, "/ported/double/spurious", 2).enter(LONG));
            assertTrue(entering.get(LONG.toSeconds(), TimeUnit.SECONDS));
        }
    }
}
