package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Acquisitions abandoned while there is no session (a client made by {@code start()} before its
 * ensemble, or one waiting for a new session after a loss) leave nothing behind on the future of
 * the next session: what waits on it is bounded by the acquisitions still waiting, not by those
 * ever abandoned. A real in-process {@link TestingServer} is started on the client's port at the
 * end, and the next acquisition still holds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbandonedSessionWaitsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int POLLS = 2_000;

    /** 2,000 cancelled acquireAsync() of a client with no session yet leave at most a few waits on the next session. */
    @Test
    void abandonedWaitsForASessionLeaveNothingOnTheNextSession() throws Exception {
        int port = InstanceSpec.getRandomPort();
        try (ZkClient client = ZkClient.builder().connectString("127.0.0.1:" + port)
                .sessionTimeout(Duration.ofSeconds(10)).start()) {
            CompletableFuture<ZkSession> next = ClientServices.of(client).session();
            assertFalse(next.isDone(), "a session without a server");
            int before = next.getNumberOfDependents();
            ZkMutex mutex = new ZkMutex(client, "/session-waits/lock");
            for (int i = 0; i < POLLS; i++) {
                assertTrue(mutex.acquireAsync().cancel(false), "held without a session");
            }
            int after = next.getNumberOfDependents() - before;
            assertTrue(after <= 1, after + " waits left on the next session by " + POLLS + " abandoned acquisitions");

            try (TestingServer server = new TestingServer(port, true)) {
                assertTrue(mutex.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS), "no hold once the server is up");
                mutex.unlock();
            }
        }
    }
}
