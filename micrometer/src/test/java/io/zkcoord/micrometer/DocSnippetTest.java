package io.zkcoord.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * The example of docs/metrics.md, which shows the marked region of this file verbatim (the
 * examples project's snippet check compares them): binding a client with a folded path tag, then
 * one lock cycle on a per-entity path shows up under the folded tag.
 */
class DocSnippetTest {

    /** A lock on /locks/orders/4711 is timed under the path tag /locks/orders/{id}. */
    @Test
    void theDocumentedBindingFoldsPerEntityPaths() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                     .sessionTimeout(Duration.ofSeconds(10)).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            bind(client, registry);

            ZkMutex mutex = new ZkMutex(client, "/locks/orders/4711");
            mutex.lock();
            mutex.unlock();

            Timer wait = registry.find("zkcoord.lock.wait").tag("path", "/locks/orders/{id}").timer();
            assertNotNull(wait, "the wait is timed under the folded path tag");
            assertEquals(1, wait.count());
        }
    }

    private static void bind(ZkClient client, MeterRegistry registry) {
        // snippet:micrometer
        ZkcoordMetrics.builder(client)
                .pathTag(path -> path.replaceAll("^/locks/orders/.*", "/locks/orders/{id}"))   // optional
                .maxPaths(200)                                                                   // optional, default 100
                .build()
                .bindTo(registry);
        // end:micrometer
    }
}
