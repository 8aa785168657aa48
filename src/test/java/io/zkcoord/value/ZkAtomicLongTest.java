package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.once.OnceRule;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ZkAtomicLong against a real server: each promise of the counter as its own test. */
@Timeout(90)
class ZkAtomicLongTest {

    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).build();
    }

    /** A missing node reads 0; compareAndSet(0, x) makes it (parents too) with x, in Curator's 8-byte format. */
    @Test
    void missingNodeReadsZeroAndCompareAndSetMakesIt() throws Exception {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/missing/deep/counter");
            assertEquals(0, counter.get());
            assertFalse(counter.compareAndSet(1, 5), "the missing node holds 0, not 1");
            assertEquals(null, c.zooKeeper().exists("/atomic/missing/deep/counter", false), "a false CAS writes nothing");
            assertTrue(counter.compareAndSet(0, 42));
            assertEquals(42, counter.get());
            byte[] data = c.zooKeeper().getData("/atomic/missing/deep/counter", false, null);
            assertArrayEquals(ByteBuffer.allocate(8).putLong(42).array(), data);
        }
    }

    /** The arithmetic: increment, decrement, add, set, overflow wraps like AtomicLong. */
    @Test
    void arithmetic() {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/arith");
            assertEquals(1, counter.incrementAndGet());
            assertEquals(2, counter.incrementAndGet());
            assertEquals(1, counter.decrementAndGet());
            assertEquals(11, counter.addAndGet(10));
            assertEquals(11, counter.addAndGet(0));
            counter.set(Long.MAX_VALUE);
            assertEquals(Long.MIN_VALUE, counter.incrementAndGet());
            assertTrue(counter.compareAndSet(Long.MIN_VALUE, -3));
            assertFalse(counter.compareAndSet(Long.MIN_VALUE, 7));
            assertEquals(-3, counter.get());
        }
    }

    /** A counter written by another client: the next write re-reads and adds to the newest value (no lost update). */
    @Test
    void staleCacheIsRefreshedOnTheRefusedWrite() {
        try (ZkClient a = client(); ZkClient b = client()) {
            ZkAtomicLong ca = new ZkAtomicLong(a, "/atomic/stale");
            ZkAtomicLong cb = new ZkAtomicLong(b, "/atomic/stale");
            assertEquals(1, ca.incrementAndGet());
            assertEquals(11, cb.addAndGet(10));
            assertEquals(12, ca.incrementAndGet());
            assertTrue(ca.compareAndSet(12, 20));
            assertFalse(cb.compareAndSet(11, 30), "b's last write left 11, but a changed it since");
            assertEquals(20, cb.get());
        }
    }

    /** 8 clients, 4 threads each, increment one counter: none is lost, and every returned value is distinct. */
    @Test
    void eightClientsLoseNoIncrement() throws Exception {
        int clients = 8;
        int threads = 4;
        int each = 25;
        List<ZkClient> cs = new ArrayList<>();
        try {
            List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                ZkClient c = client();
                cs.add(c);
                ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/contended");
                for (int t = 0; t < threads; t++) {
                    runs.add(CompletableFuture.supplyAsync(() -> {
                        List<Long> got = new ArrayList<>();
                        for (int n = 0; n < each; n++) {
                            got.add(counter.incrementAndGet());
                        }
                        return got;
                    }));
                }
            }
            Set<Long> returned = new HashSet<>();
            for (CompletableFuture<List<Long>> run : runs) {
                for (long v : run.get(60, TimeUnit.SECONDS)) {
                    assertTrue(returned.add(v), "value " + v + " returned twice");
                }
            }
            long total = (long) clients * threads * each;
            assertEquals(total, returned.size());
            assertEquals(total, new ZkAtomicLong(cs.get(0), "/atomic/contended").get());
            for (long v = 1; v <= total; v++) {
                assertTrue(returned.contains(v), "value " + v + " never returned");
            }
        } finally {
            cs.forEach(ZkClient::close);
        }
    }

    /** The async form completes on a library thread with the value after the addition. */
    @Test
    void addAndGetAsync() throws Exception {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/async");
            List<CompletableFuture<Long>> all = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                all.add(counter.addAndGetAsync(2));
            }
            Set<Long> values = new HashSet<>();
            for (CompletableFuture<Long> f : all) {
                values.add(f.get(30, TimeUnit.SECONDS));
            }
            assertEquals(20, values.size());
            assertEquals(40, counter.get());
            String thread = counter.addAndGetAsync(1).thenApply(v -> Thread.currentThread().getName()).get(30, TimeUnit.SECONDS);
            assertFalse(thread.contains("EventThread"), "completed on ZooKeeper's event thread: " + thread);
        }
    }

    /** The connection is cut after each write reached the server, before its reply: every increment counts once. */
    @Test
    void lostRepliesAreResolvedNotRepeated() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient c = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(30)).build()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/lost");
            assertEquals(1, counter.incrementAndGet());
            for (int i = 2; i <= 6; i++) {
                CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
                assertEquals(i, counter.incrementAndGet(), "the increment whose reply was lost");
                assertTrue(cut.isDone(), "the reply of that increment was cut");
            }
            assertEquals(6, counter.get());
            CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
            assertTrue(counter.compareAndSet(6, 100), "a CAS whose reply was lost, and that landed, returns true");
            assertTrue(cut.isDone());
            assertEquals(100, counter.get());
        }
    }

    /** The session ends while a write is unanswered (a partition outlasting it): CommitOutcomeUnknownException. */
    @Test
    void sessionEndingWithTheWriteUnansweredIsUnknown() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient c = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(2)).retryPolicy(RetryPolicy.forever(Duration.ofMillis(100)))
                     .build()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/unknown");
            assertEquals(1, counter.incrementAndGet());
            proxy.stall();
            CompletableFuture<Long> write = counter.addAndGetAsync(1);
            ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(60, TimeUnit.SECONDS));
            assertInstanceOf(CommitOutcomeUnknownException.class, e.getCause(), e.getCause().toString());
            proxy.heal();
            long after = counter.get();
            assertTrue(after == 1 || after == 2, "applied once or not at all: " + after);
            assertEquals(after + 1, counter.incrementAndGet(), "the counter works on in the new session");
        }
    }

    /** Without a server, a write fails with CoordinationException once the retry policy gives up. */
    @Test
    void retryPolicyGivingUpThrowsCoordinationException() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient c = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(4))
                     .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(200), 3)).build()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic/giveup");
            counter.set(5);
            proxy.stall();
            proxy.cutAll();
            assertThrows(CoordinationException.class, counter::incrementAndGet);
            proxy.heal();
            Await.until("reconnected", Duration.ofSeconds(60), () -> c.state().isConnected());
            long now = counter.get();
            assertTrue(now == 5 || now == 6, "applied at most once: " + now);
        }
    }

    /** The marker beside the value is an ephemeral child of the counter's node, and goes with the session. */
    @Test
    void markerIsEphemeralChildAndGoesWithTheSession() throws Exception {
        try (ZkClient watcher = client()) {
            long session;
            try (ZkClient c = client()) {
                new ZkAtomicLong(c, "/atomic/markers").incrementAndGet();
                session = c.sessionId();
                List<String> children = watcher.zooKeeper().getChildren("/atomic/markers", false);
                assertEquals(List.of(OnceRule.MARKER_PREFIX + Long.toHexString(session)), children);
                assertEquals(session, watcher.zooKeeper().exists("/atomic/markers/" + children.get(0), false)
                        .getEphemeralOwner());
            }
            Await.until("the marker is gone with its session", Duration.ofSeconds(20), () -> {
                try {
                    return watcher.zooKeeper().getChildren("/atomic/markers", false).isEmpty();
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(1, new ZkAtomicLong(watcher, "/atomic/markers").get());
        }
    }

    /** Data that is not 8 bytes fails clearly, and nothing is written. */
    @Test
    void corruptDataFails() throws Exception {
        try (ZkClient c = client()) {
            c.zooKeeper().create("/atomic-corrupt", new byte[3], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            ZkAtomicLong counter = new ZkAtomicLong(c, "/atomic-corrupt");
            CoordinationException e = assertThrows(CoordinationException.class, counter::incrementAndGet);
            assertTrue(e.getMessage().contains("3 bytes"), e.getMessage());
            assertEquals(3, c.zooKeeper().getData("/atomic-corrupt", false, null).length);
        }
    }

    /** Bad input fails at once. */
    @Test
    void badArguments() {
        try (ZkClient c = client()) {
            assertThrows(IllegalArgumentException.class, () -> new ZkAtomicLong(c, "relative"));
            assertThrows(IllegalArgumentException.class, () -> new ZkAtomicLong(null, "/x"));
            assertThrows(IllegalArgumentException.class, () -> new ZkAtomicLong(c, "/a/"));
        }
    }
}
