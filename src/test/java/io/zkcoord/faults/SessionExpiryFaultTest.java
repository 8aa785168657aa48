package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;

/**
 * Scenario 2: the holder's session is expired on the server in the middle of its critical section.
 */
@ZkEnsemble
class SessionExpiryFaultTest {

    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static ZkTestEnsemble ensemble;
    /** Looks at the lock directories without taking part. */
    private static ZooKeeper observer;

    @BeforeAll
    static void observe(ZkTestEnsemble zk, ZkClient observerClient) {
        ensemble = zk;
        observer = observerClient.zooKeeper();
    }

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
        try (ZkClient a = client();
             ZkClient b = client();
             MutexQueue queue = new MutexQueue("s2", checker, a, b, dir, WAIT)) {
            long oldSession = a.sessionId();
            InvariantChecker.Entry ea = queue.holderThenWaiter(observer);
            // A second thread of A's client, queued behind B: it must queue again in A's next session.
            queue.siblingBehindWaiter(observer);

            checker.fault("session of A expired on the server");
            ensemble.expireSession(a);
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

            checker.assertDirectoryEmpty(observer, dir, WAIT);
            assertEquals(1, checker.refusedWrites());
            checker.assertNoViolations();
        }
    }

    /** A client of the ensemble with {@link FaultFixtures#client}'s settings; the test closes it. */
    private static ZkClient client() {
        return ensemble.clientBuilder()
                .sessionTimeout(SESSION)
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(FaultFixtures.PATIENT)
                .build();
    }
}
