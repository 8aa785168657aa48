package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scenarios of Curator's {@code TestSharedCount} and {@code TestDistributedAtomicLong},
 * written again against {@link ZkSharedValue#ofInt} and {@link ZkAtomicLong} where they mean the
 * same. Where our contract differs on purpose (no {@code succeeded()} flag, a missing counter
 * reads 0), the test says what ours does instead.
 */
@Timeout(120)
class PortedCuratorValueTest {

    private static final Duration LONG = Duration.ofSeconds(30);

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

    // ---- TestSharedCount ----

    /** testSimple: trySet on the value just seen succeeds, again and again. */
    @Test
    void sharedCountSimple() {
        try (ZkClient c = client(); ZkSharedValue<Integer> count = ZkSharedValue.ofInt(c, "/ported/count/simple", 0)) {
            count.start();
            assertTrue(count.trySet(count.get(), 1));
            assertTrue(count.trySet(count.get(), 2));
            assertTrue(count.trySet(count.get(), 10));
            assertEquals(10, count.get().value());
        }
    }

    /** testSimpleVersioned: versions 0, 1, 2, 3; a wrong value or version is refused, and so is one the server moved past. */
    @Test
    void sharedCountSimpleVersioned() throws Exception {
        try (ZkClient c = client(); ZkSharedValue<Integer> count = ZkSharedValue.ofInt(c, "/ported/count/versioned", 0)) {
            count.start();
            Versioned<Integer> current = count.get();
            assertEquals(0, current.version());
            assertTrue(count.trySet(current, 1));
            current = count.get();
            assertEquals(new Versioned<>(1, 1), current);
            assertTrue(count.trySet(current, 5));
            current = count.get();
            assertEquals(new Versioned<>(5, 2), current);
            assertTrue(count.trySet(current, 10));
            current = count.get();
            assertEquals(new Versioned<>(10, 3), current);
            assertFalse(count.trySet(new Versioned<>(20, 3), 7), "wrong value");
            assertFalse(count.trySet(new Versioned<>(10, 10), 7), "wrong version");
            c.zooKeeper().setData("/ported/count/versioned", ByteBuffer.allocate(4).putInt(88).array(), -1);
            assertFalse(count.trySet(current, 234), "the server moved past the version seen");
            Await.until("the server's change is seen", LONG, () -> count.get().value() == 88);
        }
    }

    /** testMultiClientVersioned: two clients; each trySet on the newest value seen succeeds, a stale one fails. */
    @Test
    void sharedCountMultiClientVersioned() {
        try (ZkClient c1 = client(); ZkClient c2 = client();
             ZkSharedValue<Integer> count1 = ZkSharedValue.ofInt(c1, "/ported/count/multi-versioned", 0);
             ZkSharedValue<Integer> count2 = ZkSharedValue.ofInt(c2, "/ported/count/multi-versioned", 0)) {
            count1.start();
            count2.start();
            assertTrue(count1.trySet(count1.get(), 10));
            Await.until("count2 sees 10", LONG, () -> count2.get().value() == 10);
            assertTrue(count2.trySet(count2.get(), 20));
            Await.until("count1 sees 20", LONG, () -> count1.get().value() == 20);
            Versioned<Integer> seen1 = count1.get();
            Versioned<Integer> seen2 = count2.get();
            assertTrue(count2.trySet(seen2, 30));
            assertFalse(count1.trySet(seen1, 40), "count1's view is stale");
            Await.until("count1 sees 30", LONG, () -> count1.get().value() == 30);
            assertTrue(count1.trySet(count1.get(), 40));
        }
    }

    /** testMultiClientDifferentSeed: the first seed wins; the second client reads it. */
    @Test
    void sharedCountMultiClientDifferentSeed() {
        try (ZkClient c1 = client(); ZkClient c2 = client();
             ZkSharedValue<Integer> count1 = ZkSharedValue.ofInt(c1, "/ported/count/seeds", 10);
             ZkSharedValue<Integer> count2 = ZkSharedValue.ofInt(c2, "/ported/count/seeds", 20)) {
            count1.start();
            count2.start();
            assertEquals(10, count1.get().value());
            assertEquals(10, count2.get().value());
        }
    }

    /**
     * testMultiClients: 5 readers with listeners; a writer sets random values one by one, each
     * time waiting until all 5 have heard it; a negative value ends it. Every reader heard exactly
     * the writer's values, in order (the same value twice in a row included: a write is a change).
     */
    @Test
    void sharedCountMultiClients() {
        int readers = 5;
        List<ZkClient> clients = new ArrayList<>();
        List<ZkSharedValue<Integer>> values = new ArrayList<>();
        try {
            List<List<Integer>> heard = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                ZkClient c = client();
                clients.add(c);
                ZkSharedValue<Integer> v = ZkSharedValue.ofInt(c, "/ported/count/clients", 10);
                values.add(v);
                List<Integer> mine = new CopyOnWriteArrayList<>();
                heard.add(mine);
                v.start();
                // Added after start(): one added before also hears the first value read (Curator's does not).
                v.addListener(seen -> mine.add(seen.value()));
            }
            ZkClient w = client();
            clients.add(w);
            ZkSharedValue<Integer> writer = ZkSharedValue.ofInt(w, "/ported/count/clients", 10);
            values.add(writer);
            writer.start();
            Random random = new Random();
            List<Integer> written = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                int next = random.nextInt(100);
                written.add(next);
                writer.set(next);
                int n = written.size();
                Await.until("every reader heard value " + n, LONG, () -> heard.stream().allMatch(h -> h.size() >= n));
            }
            writer.set(-1);
            Await.until("every reader heard the end", LONG, () -> heard.stream().allMatch(h -> h.contains(-1)));
            for (List<Integer> h : heard) {
                assertEquals(written, h.subList(0, h.size() - 1));
            }
        } finally {
            values.forEach(ZkSharedValue::close);
            clients.forEach(ZkClient::close);
        }
    }

    /**
     * testDisconnectReconnectEventDoesNotFireValueWatcher: the server stops and restarts; the
     * listener hears the two changes (11, then 12 written after the reconnection) and nothing for
     * the disconnection or the reconnection.
     */
    @Test
    void sharedCountReconnectionIsNotAChange() throws Exception {
        try (TestingServer own = new TestingServer(true);
             ZkClient c = ZkClient.builder().connectString(own.getConnectString()).build();
             ZkSharedValue<Integer> count = ZkSharedValue.ofInt(c, "/ported/count/reconnect", 10)) {
            List<Integer> heard = new CopyOnWriteArrayList<>();
            count.start();
            count.addListener(v -> heard.add(v.value()));
            count.set(11);
            Await.until("11 heard", LONG, () -> heard.contains(11));
            own.stop();
            Await.until("disconnected", LONG, () -> !c.state().isConnected());
            own.restart();
            Await.until("reconnected", LONG, () -> c.state().isConnected());
            assertTrue(count.trySet(count.get(), 12));
            Await.until("12 heard", LONG, () -> heard.contains(12));
            assertEquals(List.of(11, 12), heard, "one event per change, none for the reconnection");
        }
    }

    // ---- TestDistributedAtomicLong ----

    /** testBasic: increment, decrement, add, subtract on a deep missing path (parents made); each returns the new value. */
    @Test
    void atomicLongBasic() {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/ported/foo/bar/counter");
            assertEquals(1, counter.incrementAndGet());
            assertEquals(0, counter.decrementAndGet());
            assertEquals(10, counter.addAndGet(10));
            assertEquals(5, counter.addAndGet(-5));
        }
    }

    /** testCorruptedValue: a node holding "foo" fails with a clear error, not a buffer exception. */
    @Test
    void atomicLongCorruptedValue() throws Exception {
        try (ZkClient c = client()) {
            c.zooKeeper().create("/ported-corrupt", "foo".getBytes(StandardCharsets.US_ASCII), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
            assertThrows(CoordinationException.class, () -> new ZkAtomicLong(c, "/ported-corrupt").get());
        }
    }

    /**
     * testCompareAndSetWithFreshInstance: Curator's CAS(0, 1) on a missing node fails until {@code
     * initialize(0)} makes it. Ours differs on purpose: a missing counter reads 0, so the same
     * CAS succeeds and makes the node; there is no initialize.
     */
    @Test
    void atomicLongCompareAndSetWithFreshInstance() {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/ported/fresh");
            assertTrue(counter.compareAndSet(0, 1));
            assertFalse(counter.compareAndSet(0, 1));
            assertEquals(1, counter.get());
        }
    }

    /**
     * testCompareAndSet: CAS(1, 5) succeeds once; then another client increments between this
     * client's last look and its CAS(5, 10), which must fail (Curator forces this with a hook
     * in the write; here the other client writes after this one's last operation).
     */
    @Test
    void atomicLongCompareAndSet() {
        try (ZkClient c = client(); ZkClient other = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/ported/cas");
            counter.set(1);
            assertTrue(counter.compareAndSet(1, 5));
            assertFalse(counter.compareAndSet(1, 5));
            assertEquals(6, new ZkAtomicLong(other, "/ported/cas").incrementAndGet());
            assertFalse(counter.compareAndSet(5, 10), "another client moved it to 6");
            assertEquals(6, counter.get());
        }
    }

    /**
     * testForceSet: increments racing sets to 0. As Curator's, it checks that the value stays
     * small: every increment returns between 1 and the number of increments (a set only lowers
     * it), and so does the end value; a last set leaves exactly 0.
     */
    @Test
    void atomicLongSetRacesIncrements() throws Exception {
        try (ZkClient c = client()) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/ported/force");
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                CompletableFuture<List<Long>> incs = CompletableFuture.supplyAsync(() -> {
                    List<Long> got = new ArrayList<>();
                    for (int i = 0; i < 40; i++) {
                        got.add(counter.incrementAndGet());
                    }
                    return got;
                }, pool);
                CompletableFuture<Void> sets = CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 40; i++) {
                        counter.set(0);
                    }
                }, pool);
                sets.get(60, TimeUnit.SECONDS);
                List<Long> got = incs.get(60, TimeUnit.SECONDS);
                assertTrue(got.stream().allMatch(v -> v >= 1 && v <= 40), got.toString());
                long end = counter.get();
                assertTrue(end >= 0 && end <= 40, "value " + end);
                counter.set(0);
                assertEquals(0, counter.get());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * testSimulation: 20 threads (over 4 clients) increment 10 times each. Curator counts
     * failures ({@code succeeded() == false}) and needs promotion to a lock; ours has neither:
     * every call returns, each thread sees its values strictly grow, no value is returned twice,
     * and the end value is the number of calls.
     */
    @Test
    void atomicLongSimulation() throws Exception {
        int threads = 20;
        int each = 10;
        List<ZkClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < 4; i++) {
                clients.add(client());
            }
            List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ZkAtomicLong counter = new ZkAtomicLong(clients.get(t % clients.size()), "/ported/simulation");
                runs.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> got = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        got.add(counter.incrementAndGet());
                    }
                    return got;
                }, pool));
            }
            java.util.Set<Long> all = new java.util.HashSet<>();
            for (CompletableFuture<List<Long>> r : runs) {
                List<Long> got = r.get(90, TimeUnit.SECONDS);
                for (int i = 1; i < got.size(); i++) {
                    assertTrue(got.get(i) > got.get(i - 1), "a thread's values grow: " + got);
                }
                for (long v : got) {
                    assertTrue(all.add(v), "value " + v + " returned twice");
                }
            }
            assertEquals((long) threads * each, new ZkAtomicLong(clients.get(0), "/ported/simulation").get());
        } finally {
            pool.shutdownNow();
            clients.forEach(ZkClient::close);
        }
    }
}
