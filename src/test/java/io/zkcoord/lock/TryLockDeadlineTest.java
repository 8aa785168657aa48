package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Timed and non-blocking acquisition while the ensemble is unreachable: the deadline counts the
 * ZooKeeper calls, so a client whose retry policy never gives up still returns on time, and leaves
 * no node behind once the ensemble is back.
 */
@Timeout(60)
class TryLockDeadlineTest {

    private static final String PATH = "/deadline/lock";

    private TestingServer server;
    private ZkClient client;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        client = ZkClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.forever(Duration.ofMillis(100)))
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
    }

    /** With the server down, tryLock(300 ms) returns false in seconds although the policy retries forever. */
    @Test
    void timedTryLockReturnsFalseWhileTheEnsembleIsUnreachable() throws Exception {
        ZkMutex mutex = new ZkMutex(client, PATH);
        server.stop();
        Await.until("client suspended", Duration.ofSeconds(10), () -> client.state() == ConnectionState.SUSPENDED);

        long start = System.nanoTime();
        assertFalse(mutex.tryLock(300, TimeUnit.MILLISECONDS));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis < 8_000, "tryLock(300 ms) took " + tookMillis + " ms");
        assertFalse(mutex.isHeldByCurrentThread());

        start = System.nanoTime();
        assertFalse(mutex.tryLock());
        tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis < 8_000, "tryLock() took " + tookMillis + " ms");

        server.restart();
        Await.until("client reconnected", Duration.ofSeconds(20), () -> client.state() == ConnectionState.RECONNECTED);
        Await.until("no node left under " + PATH, Duration.ofSeconds(10), () -> children().isEmpty());
        assertTrue(mutex.tryLock(5, TimeUnit.SECONDS), "the lock is free once the ensemble is back");
        mutex.unlock();
        assertEquals(List.of(), children());
    }

    /** lock() is not bounded by a deadline: with a forever policy it rides out the outage and acquires. */
    @Test
    void lockWaitsOutAnOutageUnderAForeverPolicy() throws Exception {
        ZkMutex mutex = new ZkMutex(client, PATH);
        server.stop();
        Await.until("client suspended", Duration.ofSeconds(10), () -> client.state() == ConnectionState.SUSPENDED);

        CompletableFuture<Long> token = CompletableFuture.supplyAsync(() -> {
            mutex.lock();
            try {
                return mutex.fencingToken();
            } finally {
                mutex.unlock();
            }
        });
        Await.until("lock() retrying while the server is down", Duration.ofSeconds(5),
                () -> !token.isDone() && client.state() == ConnectionState.SUSPENDED);
        server.restart();
        assertTrue(token.get(30, TimeUnit.SECONDS) > 0);
        Await.until("no node left under " + PATH, Duration.ofSeconds(10), () -> children().isEmpty());
    }

    /** After LOST, while no new session can be made, tryLock(300 ms) and tryLock() return false on time. */
    @Test
    void timedTryLockDoesNotWaitForANewSessionBeyondItsDeadline() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 100, -1, Map.of());
        try (TestingServer fast = new TestingServer(spec, true);
             ZkClient lost = ZkClient.builder()
                     .connectString(fast.getConnectString())
                     .sessionTimeout(Duration.ofMillis(1500))
                     .retryPolicy(RetryPolicy.forever(Duration.ofMillis(100)))
                     .build()) {
            ZkMutex mutex = new ZkMutex(lost, PATH);
            fast.stop();
            Await.until("client reports LOST by itself", Duration.ofSeconds(15),
                    () -> lost.state() == ConnectionState.LOST);

            long start = System.nanoTime();
            assertFalse(mutex.tryLock(300, TimeUnit.MILLISECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // Room for a busy machine: no new session can be made here, so a try that waited for one never returns.
            assertTrue(tookMillis < 10_000, "tryLock(300 ms) took " + tookMillis + " ms");

            start = System.nanoTime();
            assertFalse(mutex.tryLock());
            tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < 10_000, "tryLock() took " + tookMillis + " ms");
        }
    }

    private List<String> children() {
        return LockQueue.children(client, PATH);
    }
}
