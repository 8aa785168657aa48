package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.test.Fault;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The semaphore's time limits while the network is silent (packets dropped, not refused:
 * {@link ZkTestEnsemble#partition}), as for the locks: the limit is kept by the waiting caller, not by a
 * thread stuck in a ZooKeeper call. The bound, {@code BOUND}, is far looser than the promises (time +
 * 200 ms, one look within 1 s) so that the test fails only for a wrong answer, not on a loaded 2-core
 * machine; measured times are logged.
 */
@Timeout(90)
@ZkEnsemble
class SemaphoreSilentPartitionTest {

    private static final Logger LOG = LoggerFactory.getLogger(SemaphoreSilentPartitionTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(10);
    /**
     * What each call may take while SUSPENDED: half the session timeout. A call that kept its limit takes
     * its limit plus milliseconds; room beyond that is for a busy machine's scheduling. A call that did not
     * (one sitting in a ZooKeeper request until the client's connection attempt fails, which with one
     * server is the whole session timeout, or one waiting for the network under the retry-forever policy)
     * takes 10 s or more and fails the check.
     */
    private static final long BOUND = SESSION.toMillis() / 2;

    /** tryAcquire(300 ms), tryAcquire(ZERO) and an interrupted acquire() return on time while SUSPENDED; nothing is left after the heal. */
    @Test
    void timeLimitsHoldInASilentPartition(ZkTestEnsemble ensemble, ZkClient direct) throws Exception {
        ZkClient client = ensemble.clientBuilder()
                .sessionTimeout(SESSION)
                .retryPolicy(RetryPolicy.forever(Duration.ofMillis(100)))
                .build();
        Fault partition = null;
        try {
            ZkSemaphore semaphore = new ZkSemaphore(client, "/silent/sem", 2);
            semaphore.acquire().release(); // records the count; the directory exists
            ZkSemaphore other = new ZkSemaphore(direct, "/silent/sem", 2);
            ZkLease h1 = other.acquire();
            ZkLease h2 = other.acquire();
            partition = ensemble.partition(client);
            Await.until("client suspended", WAIT, () -> client.state() == ConnectionState.SUSPENDED);

            long start = System.nanoTime();
            Optional<ZkLease> timed = semaphore.tryAcquire(Duration.ofMillis(300));
            long timedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            LOG.info("MEASURED semaphore tryAcquire(300 ms) while suspended: {} ms", timedMillis);
            assertEquals(Optional.empty(), timed);
            assertTrue(timedMillis <= BOUND, "tryAcquire(300 ms) took " + timedMillis + " ms");

            start = System.nanoTime();
            Optional<ZkLease> look = semaphore.tryAcquire(Duration.ZERO);
            long lookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            LOG.info("MEASURED semaphore tryAcquire(ZERO) while suspended: {} ms", lookMillis);
            assertEquals(Optional.empty(), look);
            assertTrue(lookMillis <= BOUND, "tryAcquire(ZERO) took " + lookMillis + " ms");

            CompletableFuture<Long> interrupted = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    semaphore.acquire().release();
                    interrupted.complete(-1L);
                } catch (InterruptedException e) {
                    interrupted.complete(System.nanoTime());
                } catch (Throwable t) {
                    interrupted.completeExceptionally(t);
                }
            }, "silent-waiter");
            waiter.start();
            Await.until("the waiter waits", WAIT, () -> waiter.getState() == Thread.State.WAITING);
            long interruptAt = System.nanoTime();
            waiter.interrupt();
            long answeredAt = interrupted.get(10, TimeUnit.SECONDS);
            long answerMillis = TimeUnit.NANOSECONDS.toMillis(answeredAt - interruptAt);
            LOG.info("MEASURED semaphore acquire() answered an interrupt while suspended in {} ms", answerMillis);
            assertTrue(answeredAt > 0 && answerMillis <= BOUND, "interrupt answered after " + answerMillis + " ms");

            partition.heal();
            h1.release();
            h2.release();
            Await.until("no node left once the network is back", WAIT, () -> children(direct).isEmpty());
            ZkLease after = semaphore.tryAcquire(Duration.ofSeconds(10)).orElseThrow();
            after.release();
            Await.until("no node left", WAIT, () -> children(direct).isEmpty());
        } finally {
            if (partition != null) {
                partition.heal();
            }
            client.close();
        }
    }

    private static List<String> children(ZkClient c) {
        try {
            return c.zooKeeper().getChildren("/silent/sem", false);
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return List.of(); // the last release removed the directory
        } catch (Exception e) {
            return List.of("unreadable: " + e);
        }
    }
}
