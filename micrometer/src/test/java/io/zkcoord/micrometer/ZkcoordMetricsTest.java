package io.zkcoord.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The meters of {@link ZkcoordMetrics} move as locks are contended, time out and are lost, on a real server. */
class ZkcoordMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static TestingServer server;
    private static ExecutorService threads;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() throws Exception {
        threads.shutdownNow();
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(4)).build();
    }

    /**
     * Contention, a timeout, then a session expired on the server: the wait and hold timers, the
     * timeout and loss counters, the session gauge and the transition counter all move.
     */
    @Test
    void metersMoveThroughContentionTimeoutAndLoss() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (ZkClient client = client(); ZkcoordMetrics metrics = ZkcoordMetrics.builder(client).build()) {
            metrics.bindTo(registry);
            assertEquals(1.0, gauge(registry, "connected"));
            ZkMutex mutex = new ZkMutex(client, "/metrics/orders");

            // Contention: a second thread queues behind the holder, and gets the lock when it is released.
            mutex.lock();
            Future<?> waiter = threads.submit(() -> {
                mutex.lock();
                mutex.unlock();
                return null;
            });
            until("the waiter queued", () -> children(client, "/metrics/orders") == 2);
            mutex.unlock();
            waiter.get(10, TimeUnit.SECONDS);

            // A timeout: the lock is held while another thread tries for 100 ms.
            mutex.lock();
            assertFalse(threads.submit(() -> mutex.tryLock(100, TimeUnit.MILLISECONDS)).get(10, TimeUnit.SECONDS));
            mutex.unlock();

            Timer granted = registry.get("zkcoord.lock.wait").tags("path", "/metrics/orders", "recipe", "mutex",
                    "outcome", "granted").timer();
            assertEquals(3, granted.count());
            assertTrue(granted.max(TimeUnit.NANOSECONDS) > 0);
            assertEquals(1, registry.get("zkcoord.lock.wait").tags("outcome", "timed_out").timer().count());
            Timer released = registry.get("zkcoord.lock.hold").tags("path", "/metrics/orders", "recipe", "mutex",
                    "outcome", "released").timer();
            assertEquals(3, released.count());
            assertTrue(released.totalTime(TimeUnit.NANOSECONDS) > 0);
            assertEquals(1.0, registry.get("zkcoord.lock.timeouts").tags("path", "/metrics/orders").counter().count());
            assertNull(registry.find("zkcoord.lock.losses").counter(), "no loss yet");

            // A loss: the session of a lease expires on the server.
            ZkLease lease = new ZkMutex(client, "/metrics/lease").acquire();
            ServerSideExpiry.expire(client.zooKeeper(), server.getConnectString(), WAIT);
            until("the loss is counted", () -> count(registry, "zkcoord.lock.losses") == 1.0);
            assertEquals(1, registry.get("zkcoord.lock.hold").tags("path", "/metrics/lease", "outcome", "lost").timer().count());
            until("the new session shows", () -> gauge(registry, "reconnected") == 1.0);
            assertEquals(0.0, gauge(registry, "connected"));
            assertEquals(1.0, registry.get("zkcoord.session.transitions").tags("state", "lost").counter().count());
            assertFalse(lease.isValid());
        }
    }

    /** Paths map through pathTag, and past maxPaths distinct values every new path is tagged "other". */
    @Test
    void pathTagsAreMappedAndLimited() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (ZkClient client = client()) {
            ZkcoordMetrics.builder(client)
                    .pathTag(p -> p.startsWith("/card/item/") ? "/card/item/{id}" : p)
                    .maxPaths(2)
                    .build()
                    .bindTo(registry);
            for (String path : new String[] {"/card/item/1", "/card/item/2", "/card/a", "/card/b", "/card/c"}) {
                ZkMutex mutex = new ZkMutex(client, path);
                mutex.lock();
                mutex.unlock();
            }
            Set<String> tags = registry.find("zkcoord.lock.hold").timers().stream()
                    .map(t -> t.getId().getTag("path")).collect(Collectors.toSet());
            assertEquals(Set.of("/card/item/{id}", "/card/a", ZkcoordMetrics.OTHER), tags);
            assertEquals(2, registry.get("zkcoord.lock.hold").tags("path", "/card/item/{id}").timer().count());
            assertEquals(2, registry.get("zkcoord.lock.hold").tags("path", ZkcoordMetrics.OTHER).timer().count());
        }
    }

    /** Bad settings fail at once; close() stops the updates. */
    @Test
    void settingsAreCheckedAndCloseStopsUpdates() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> ZkcoordMetrics.builder(null));
        try (ZkClient client = client()) {
            assertThrows(IllegalArgumentException.class, () -> ZkcoordMetrics.builder(client).maxPaths(0));
            assertThrows(IllegalArgumentException.class, () -> ZkcoordMetrics.builder(client).pathTag(null));
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            ZkcoordMetrics metrics = ZkcoordMetrics.builder(client).build();
            assertThrows(IllegalArgumentException.class, () -> metrics.bindTo(null));
            metrics.bindTo(registry);
            ZkMutex mutex = new ZkMutex(client, "/metrics/closed");
            mutex.lock();
            mutex.unlock();
            metrics.close();
            mutex.lock();
            mutex.unlock();
            assertEquals(1, registry.get("zkcoord.lock.hold").tags("path", "/metrics/closed").timer().count());
        }
    }

    private static double gauge(SimpleMeterRegistry registry, String state) {
        Gauge g = registry.get("zkcoord.session.state").tags("state", state).gauge();
        return g.value();
    }

    private static double count(SimpleMeterRegistry registry, String name) {
        return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static int children(ZkClient client, String path) {
        try {
            return client.zooKeeper().getChildren(path, false).size();
        } catch (Exception e) {
            return -1;
        }
    }

    /** Polls {@code condition} until it holds, failing after {@link #WAIT}. */
    private static void until(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT.toMillis() + " ms: " + what);
            }
            Thread.sleep(10);
        }
    }
}
