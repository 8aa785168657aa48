package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How waits end while the ensemble is unreachable: a release cut short by close(), and an
 * acquisition that finds no session within the retry policy. Both found by review of the
 * asynchronous core; both hung before the fix.
 */
@Timeout(90)
class OutageEndingsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** unlock() retrying a delete while the server is down returns once the client is closed (the node goes with the session). */
    @Test
    void unlockRetryingDuringAnOutageEndsWhenTheClientCloses() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                    .sessionTimeout(Duration.ofSeconds(30))
                    .retryPolicy(RetryPolicy.fixedDelay(Duration.ofSeconds(3), 100))
                    .build();
            ZkMutex mutex = new ZkMutex(client, "/outage/release");
            CompletableFuture<Void> locked = new CompletableFuture<>();
            CompletableFuture<Void> unlockGo = new CompletableFuture<>();
            CompletableFuture<Throwable> unlocked = new CompletableFuture<>();
            Thread holder = new Thread(() -> {
                mutex.lock();
                locked.complete(null);
                unlockGo.join();
                try {
                    mutex.unlock();
                    unlocked.complete(null);
                } catch (Throwable t) {
                    unlocked.complete(t);
                }
            }, "outage-holder");
            holder.setDaemon(true);
            holder.start();
            locked.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            server.stop();
            Await.until("client suspended", WAIT, () -> client.state() == ConnectionState.SUSPENDED);
            unlockGo.complete(null);
            Await.until("unlock() is retrying", WAIT, () -> holder.getState() == Thread.State.WAITING);
            client.close();
            Throwable outcome = unlocked.get(5, TimeUnit.SECONDS);
            assertTrue(outcome == null || outcome instanceof CoordinationException,
                    "unlock() ended with " + outcome);
            assertTrue(!mutex.isHeldByCurrentThread());
        }
    }

    /** lock() and acquireAsync() on a client that lost its session and cannot build another fail under the retry policy. */
    @Test
    void acquiringWithoutASessionGivesUpUnderTheRetryPolicy() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 100, -1, Map.of());
        try (TestingServer server = new TestingServer(spec, true);
             ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                     .sessionTimeout(Duration.ofMillis(1500))
                     .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(200), 5))
                     .build()) {
            ZkMutex mutex = new ZkMutex(client, "/outage/session");
            server.stop();
            Await.until("client reports LOST", WAIT, () -> client.state() == ConnectionState.LOST);
            assertThrows(CoordinationException.class, mutex::lock);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> mutex.acquireAsync().get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(failed.getCause() instanceof CoordinationException, "failed with " + failed.getCause());
        }
    }
}
