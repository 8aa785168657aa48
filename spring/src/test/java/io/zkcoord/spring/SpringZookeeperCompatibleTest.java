package io.zkcoord.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * {@link ZkcoordLockRegistry#springZookeeperCompatible}: the paths and protocol of Spring
 * Integration's {@code ZookeeperLockRegistry} (Curator's {@code InterProcessMutex} on {@code
 * /SpringIntegration-LockRegistry/<key>}), shared with such a lock as one queue.
 */
class SpringZookeeperCompatibleTest {

    @Test
    void sharesLocksWithSpringsZookeeperRegistryPaths() throws Exception {
        try (TestingServer server = new TestingServer(true);
                ZkClient client = ZkClient.builder().connectString(server.getConnectString()).build();
                CuratorFramework curator = CuratorFrameworkFactory.newClient(server.getConnectString(),
                        new ExponentialBackoffRetry(20, 5))) {
            curator.start();
            ZkcoordLockRegistry registry = ZkcoordLockRegistry.springZookeeperCompatible(client);
            assertEquals("/SpringIntegration-LockRegistry/orders/42", registry.path("orders/42"), "the raw key");
            assertThrows(IllegalArgumentException.class, () -> registry.obtain("orders//42"));
            assertThrows(IllegalArgumentException.class, () -> registry.obtain("orders/"));
            // What Spring's registry runs for the key "orders/42": a Curator mutex on root + "/" + key.
            InterProcessMutex spring = new InterProcessMutex(curator, "/SpringIntegration-LockRegistry/orders/42");
            assertTrue(spring.acquire(10, TimeUnit.SECONDS));
            ZkcoordLock ours = registry.obtain("orders/42");
            assertFalse(ours.tryLock(), "the Spring/Curator holder excludes ours");
            AtomicBoolean released = new AtomicBoolean();
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<Boolean> waiter = pool.submit(() -> {
                    ours.lock();
                    try {
                        assertTrue(curator.getChildren().forPath("/SpringIntegration-LockRegistry/orders/42").get(0)
                                .startsWith("_c_"), "our node carries Curator's name");
                        return released.get();
                    } finally {
                        ours.unlock();
                    }
                });
                Await.until("ours queued", Duration.ofSeconds(30),
                        () -> children(curator, "/SpringIntegration-LockRegistry/orders/42") == 2);
                released.set(true);
                spring.release();
                assertTrue(waiter.get(30, TimeUnit.SECONDS), "ours held only once Spring's holder released");
            } finally {
                pool.shutdownNow();
            }
            assertTrue(spring.acquire(10, TimeUnit.SECONDS), "and Spring's lock works after ours");
            spring.release();
        }
    }

    private static int children(CuratorFramework c, String path) {
        try {
            return c.getChildren().forPath(path).size();
        } catch (Exception e) {
            return -1;
        }
    }
}
