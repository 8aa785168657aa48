package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lost create reply on the FIRST acquisition of a {@code ZkSemaphore} object (its permit count
 * not yet checked), found by review: the recovered node must go through the count check, and a
 * recovered first waiter must keep a live watch of the queue. Both failed before the fix (the
 * first stalled the semaphore for good, the second granted a lease in a 1-permit semaphore that
 * already had its holder).
 */
@Timeout(120)
class SemaphoreLostCreateTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** A fresh object whose create reply is lost, recovered as first waiter, is granted when the holders leave. */
    @Test
    @ZkEnsemble
    void recoveredFirstWaiterOfAFreshObjectIsWoken(ZkTestEnsemble ensemble, ZkClient direct, ZkClient other)
            throws Exception {
        // The ensemble has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString());
             ZkClient cutOff = client(proxy.connectString())) {
            String path = "/lost-create/first-waiter";
            ZkSemaphore holders = new ZkSemaphore(direct, path, 2);
            ZkLease h1 = holders.acquire();
            ZkLease h2 = holders.acquire();
            long watchesBefore = ensemble.serverWatchCount();

            CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
            CompletableFuture<ZkLease> fresh = new ZkSemaphore(cutOff, path, 2).acquireAsync();
            cut.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            Await.until("the recovered first waiter watches the queue", WAIT,
                    () -> children(direct, path).size() == 3 && ensemble.serverWatchCount() > watchesBefore);
            CompletableFuture<ZkLease> behind = new ZkSemaphore(other, path, 2).acquireAsync();
            Await.until("a waiter queued behind it", WAIT, () -> children(direct, path).size() == 4);

            h1.release();
            ZkLease first = fresh.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(first.isValid());
            h2.release();
            ZkLease second = behind.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(second.fencingToken() > first.fencingToken());
            first.release();
            second.release();
            Await.until("no node left", WAIT, () -> children(direct, path).isEmpty());
        }
    }

    /** A fresh object with the wrong permit count whose create reply is lost fails with IllegalStateException and leaves no node. */
    @Test
    @ZkEnsemble
    void recoveredCreateIsCheckedAgainstTheRecordedCount(ZkTestEnsemble ensemble, ZkClient direct) throws Exception {
        // The ensemble has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString());
             ZkClient cutOff = client(proxy.connectString())) {
            String path = "/lost-create/count";
            ZkLease holder = new ZkSemaphore(direct, path, 1).acquire();

            CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
            CompletableFuture<ZkLease> wrong = new ZkSemaphore(cutOff, path, 3).acquireAsync();
            cut.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> wrong.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, failed.getCause());
            assertTrue(failed.getCause().getMessage().contains("1") && failed.getCause().getMessage().contains("3"),
                    failed.getCause().getMessage());
            Await.until("only the holder's node is left", WAIT, () -> children(direct, path).size() == 1);
            assertTrue(holder.isValid());
            holder.release();
            Await.until("no node left", WAIT, () -> children(direct, path).isEmpty());
        }
    }

    private static ZkClient client(String connect) {
        return ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build();
    }

    private static List<String> children(ZkClient c, String path) {
        try {
            return c.zooKeeper().getChildren(path, false);
        } catch (Exception e) {
            return List.of();
        }
    }
}
