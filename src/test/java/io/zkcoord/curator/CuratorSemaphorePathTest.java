package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.semaphore.ZkSemaphore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** A ZkSemaphore refuses a path where Curator's semaphore lives, with an error that says so, and leaves no node. */
class CuratorSemaphorePathTest {

    @Test
    void zkSemaphoreRefusesACuratorSemaphorePath() throws Exception {
        try (TestingServer server = new TestingServer(true); Fleet fleet = new Fleet(server.getConnectString())) {
            CuratorFramework c = fleet.curator();
            InterProcessSemaphoreV2 curatorSemaphore = new InterProcessSemaphoreV2(c, "/sem/jobs", 2);
            Lease lease = curatorSemaphore.acquire(10, TimeUnit.SECONDS);
            ZkClient z = fleet.zkcoord();
            ZkSemaphore ours = new ZkSemaphore(z, "/sem/jobs", 2);
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> ours.tryAcquire(Duration.ofSeconds(10)));
            assertTrue(refused.getMessage().contains("InterProcessSemaphoreV2"), refused.getMessage());
            assertEquals(List.of("leases", "locks"), z.zooKeeper().getChildren("/sem/jobs", false).stream().sorted().toList(),
                    "our refused attempt left no node");
            curatorSemaphore.returnLease(lease);
        }
    }
}
