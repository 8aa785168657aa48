package io.zkcoord.shedlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * The provider example of docs/spring-and-shedlock.md, which shows the marked region of this file
 * verbatim (the examples project's snippet check compares them).
 */
class DocSnippetTest {

    /** The documented run gets a token, and its unlock keeps the lock for lockAtLeastFor. */
    @Test
    void theDocumentedProviderCallsWork() {
        try (TestingServer server = new TestingServer(true);
             ZkClient client = ZkClient.builder().connectString(server.getConnectString()).build()) {
            AtomicLong token = new AtomicLong();
            runOnce(client, token::set);
            assertTrue(token.get() > 0, "the run got a fencing token");
            ZkcoordLockProvider other = new ZkcoordLockProvider(client, "/shedlock");
            assertTrue(other.lock(new LockConfiguration(Instant.now(), "report", Duration.ofMinutes(10), Duration.ZERO))
                    .isEmpty(), "held for lockAtLeastFor after the unlock");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void runOnce(ZkClient client, LongConsumer runReport) {
        // snippet:provider
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, "/shedlock");
        LockConfiguration report = new LockConfiguration(Instant.now(), "report",
                Duration.ofMinutes(10), Duration.ofMinutes(1));   // lockAtMostFor, lockAtLeastFor
        Optional<SimpleLock> lock = provider.lock(report);       // empty: another instance has it
        lock.ifPresent(held -> {
            try {
                runReport.accept(provider.fencingToken("report").orElseThrow());
            } finally {
                held.unlock();                                   // held on until 1 minute after it was taken
            }
        });
        // end:provider
    }
}
