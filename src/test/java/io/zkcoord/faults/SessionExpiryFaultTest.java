package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 2: the holder's session is expired on the server in the middle of its critical section.
 */
class SessionExpiryFaultTest {

    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(500, SESSION);

    /**
     * Expiring the holder's session on the server hands the lock to the next waiter; the old holder is told
     * (listener, {@code isHeldByCurrentThread()} false) and its late write with the old token is refused; a
     * second thread of the old holder's client, queued when the session expired, queues again in the new
     * session and gets the lock after the new holder.
     */
    @RepeatedTest(3)
    void expiredHolderIsToldAndFenced() throws Exception {
        expiredHolderIsToldAndFencedOnce();
    }

    /** Soak: the session-expiry scenario, many more times. */
    @Tag("soak")
    @RepeatedTest(20)
    void expiredHolderIsToldAndFencedSoak() throws Exception {
        expiredHolderIsToldAndFencedOnce();
    }

    private void expiredHolderIsToldAndFencedOnce() throws Exception {
        String dir = "/faults/expiry-" + System.nanoTime();
        InvariantChecker checker = new InvariantChecker("S2 session expiry");
        try (ZkClient a = FaultFixtures.client(server.connectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             MutexQueue queue = new MutexQueue("s2", checker, a, b, dir, WAIT)) {
            long oldSession = a.sessionId();
            InvariantChecker.Entry ea = queue.holderThenWaiter(server.observer());
            // A second thread of A's client, queued behind B: it must queue again in A's next session.
            queue.siblingBehindWaiter(server.observer());

            checker.fault("session of A expired on the server");
            SessionExpiry.expireOnServer(a.zooKeeper(), server.connectString(), WAIT);
            InvariantChecker.Entry eb = queue.awaitWaiter();
            assertTrue(eb.token() > ea.token(), "tokens grow from one holder to the next");

            Await.until("A told of its loss", WAIT, () -> checker.lossReported(ea.token()));
            assertFalse(queue.holderHolds(), "A must not believe it holds the lock");
            assertEquals(ea.token(), (long) queue.holder.call(queue.ma::fencingToken), "the old token stays readable");
            assertFalse(queue.holderWrites(), "the late write of A must be refused");
            queue.releaseHolder();
            queue.releaseWaiter(eb);
            queue.awaitRequeuedSiblingThenRelease(eb);

            Await.until("A in a new session", WAIT, () -> a.state() == ConnectionState.RECONNECTED);
            assertNotEquals(oldSession, a.sessionId());

            checker.assertDirectoryEmpty(server.observer(), dir, WAIT);
            assertEquals(1, checker.refusedWrites());
            checker.assertNoViolations();
        }
    }
}
