package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The semaphore end to end on one server: N leases at once, the N+1st waits, FIFO hand-over, count mismatch. */
@Timeout(60)
class SemaphoreSmokeTest {

    /** Three permits: three leases at once, the fourth waits and gets the first freed permit; nothing is left. */
    @Test
    void threePermits() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient a = ZkClient.builder().connectString(server.getConnectString()).build();
             ZkClient b = ZkClient.builder().connectString(server.getConnectString()).build()) {
            ZkSemaphore sa = new ZkSemaphore(a, "/smoke/sem", 3);
            ZkSemaphore sb = new ZkSemaphore(b, "/smoke/sem", 3);
            List<ZkLease> held = new ArrayList<>();
            held.add(sa.acquire());
            held.add(sb.acquire());
            held.add(sa.acquire());
            assertEquals(Optional.empty(), sb.tryAcquire(Duration.ZERO));
            assertEquals(Optional.empty(), sb.tryAcquire(Duration.ofMillis(200)));
            CompletableFuture<ZkLease> fourth = sb.acquireAsync();
            // Two clients' creates race on the wire: queue the fifth only once the fourth's node exists.
            Await.until("the fourth queued", Duration.ofSeconds(10), () -> children(a).size() == 4);
            CompletableFuture<ZkLease> fifth = sa.acquireAsync();
            Await.until("both queued", Duration.ofSeconds(10), () -> children(a).size() == 5);
            assertFalse(fourth.isDone());
            held.get(1).release();
            ZkLease f = fourth.get(10, TimeUnit.SECONDS);
            assertTrue(f.isValid());
            assertFalse(fifth.isDone(), "the fifth waits: three are valid");
            held.get(0).release();
            ZkLease g = fifth.get(10, TimeUnit.SECONDS);
            assertTrue(g.fencingToken() > f.fencingToken());
            f.release();
            g.release();
            held.get(2).release();
            Await.until("nothing left", Duration.ofSeconds(10), () -> children(a).isEmpty());
            ZkSemaphore other = new ZkSemaphore(b, "/smoke/sem", 4);
            IllegalStateException e = assertThrows(IllegalStateException.class, other::acquire);
            assertTrue(e.getMessage().contains("3") && e.getMessage().contains("4"), e.getMessage());
            assertTrue(children(a).isEmpty());
        }
    }

    /** A client whose node ACL grants no WRITE cannot build a semaphore: its holders could not wake the next in line. */
    @Test
    void anAclWithoutWriteIsRefused() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient readOnly = ZkClient.builder().connectString(server.getConnectString())
                     .acl(List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE,
                             ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                     .build()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new ZkSemaphore(readOnly, "/smoke/acl", 2));
            assertTrue(e.getMessage().contains("WRITE"), e.getMessage());
        }
    }

    private static List<String> children(ZkClient c) {
        try {
            return c.zooKeeper().getChildren("/smoke/sem", false);
        } catch (Exception e) {
            return List.of();
        }
    }
}
