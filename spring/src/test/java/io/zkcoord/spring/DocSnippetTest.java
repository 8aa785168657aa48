package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * The registry example of docs/spring-and-shedlock.md, which shows the marked region of this file
 * verbatim (the examples project's snippet check compares them).
 */
class DocSnippetTest {

    /** The documented calls run the task under the lock, hand the export a token, and release both locks. */
    @Test
    void theDocumentedRegistryCallsWork() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient client = ZkClient.builder().connectString(server.getConnectString()).build();
             ZkClient other = ZkClient.builder().connectString(server.getConnectString()).build()) {
            AtomicBoolean shipped = new AtomicBoolean();
            AtomicLong exported = new AtomicLong();
            useRegistry(client, () -> shipped.set(true), exported::set);
            assertThat(shipped).isTrue();
            assertThat(exported.get()).isPositive();
            ZkcoordLockRegistry registry = new ZkcoordLockRegistry(other, "/locks");
            for (String key : new String[] {"orders/42", "nightly-export"}) {
                assertThat(registry.obtain(key).tryLock()).as(key + " was released").isTrue();
                registry.obtain(key).unlock();
            }
        }
    }

    private static void useRegistry(ZkClient client, Runnable ship, LongConsumer export) throws Exception {
        // snippet:registry
        ZkcoordLockRegistry registry = new ZkcoordLockRegistry(client, "/locks");

        registry.executeLocked("orders/42", ship::run);               // Spring's helper, unchanged

        ZkcoordLock lock = registry.obtain("nightly-export");        // a DistributedLock
        if (lock.tryLock(Duration.ofSeconds(5), Duration.ofMinutes(5))) {   // wait 5 s, hold 5 min at most
            try {
                export.accept(lock.fencingToken());                  // the store refuses stale tokens
                registry.renewLock("nightly-export");                // 5 more minutes from now
            } finally {
                lock.unlock();   // ConcurrentModificationException if the 5 minutes ran out first
            }
        }
        // end:registry
    }
}
