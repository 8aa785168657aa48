package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 3: the holder is cut off from the ensemble by a partition (the proxy stalls), long enough for
 * its session to expire; and, as a counter-check, a partition shorter than the session timeout, which must
 * cost nothing.
 */
class PartitionFaultTest {

    /** Ticks of 300 ms allow sessions of 0.6 to 6 s, checked for expiry every 300 ms. */
    private static final int TICK_MS = 300;
    /** The partitioned holder's session: short, so the scenario takes seconds. */
    private static final Duration HOLDER_SESSION = Duration.ofSeconds(2);
    /** The other clients' sessions: the longest the server allows. */
    private static final Duration SESSION = Duration.ofMillis(20 * TICK_MS);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(TICK_MS, SESSION);

    /**
     * A partitioned holder reports SUSPENDED, then LOST after the session timeout while still cut off; the
     * ensemble expires its session and the waiter acquires; after the heal the old holder is in a new
     * session, does not believe it holds the lock, and its late write is refused; a second thread of its
     * client, queued during the partition, queues again in the new session and gets the lock after B.
     */
    @RepeatedTest(3)
    void partitionedHolderLosesTheLockAndKnowsIt() throws Exception {
        partitionedHolderLosesTheLockAndKnowsItOnce();
    }

    /** Soak: the long-partition scenario, many more times. */
    @Tag("soak")
    @RepeatedTest(20)
    void partitionedHolderLosesTheLockAndKnowsItSoak() throws Exception {
        partitionedHolderLosesTheLockAndKnowsItOnce();
    }

    private void partitionedHolderLosesTheLockAndKnowsItOnce() throws Exception {
        String dir = "/faults/partition-" + System.nanoTime();
        InvariantChecker checker = new InvariantChecker("S3 partition");
        try (ZkProxy proxy = ZkProxy.to(server.connectString());
             ZkClient a = FaultFixtures.client(proxy.connectString(), HOLDER_SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             MutexQueue queue = new MutexQueue("s3", checker, a, b, dir, WAIT)) {
            FaultFixtures.StateLog states = FaultFixtures.StateLog.of(a);
            long oldSession = a.sessionId();
            long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(a.session().timeoutMillis());

            InvariantChecker.Entry ea = queue.holderThenWaiter(server.observer());
            // A second thread of A's client, queued behind B: it must queue again in A's next session.
            queue.siblingBehindWaiter(server.observer());

            long cut = System.nanoTime();
            checker.fault("holder partitioned");
            proxy.stall();
            long suspended = states.await(ConnectionState.SUSPENDED, cut, WAIT);
            long lost = states.await(ConnectionState.LOST, cut, WAIT);
            assertTrue(proxy.isStalled(), "LOST must come while still cut off");
            // Whichever declares it (this library after the session timeout of silence, or ZooKeeper 3.9's
            // own client-side expiry), LOST must not come before the server could have expired the session.
            assertTrue(suspended < lost && lost - cut >= timeoutNanos, "LOST only after the session timeout: "
                    + TimeUnit.NANOSECONDS.toMillis(lost - cut) + " ms after the cut");
            Await.until("A told of its loss", WAIT, () -> checker.lossReported(ea.token()));
            assertFalse(queue.holderHolds(), "A must not believe it holds the lock once LOST");

            InvariantChecker.Entry eb = queue.awaitWaiter();
            assertTrue(eb.token() > ea.token(), "tokens grow from one holder to the next");

            proxy.heal();
            Await.until("A in a new session after the heal", WAIT,
                    () -> a.state() == ConnectionState.RECONNECTED && a.sessionId() != oldSession);
            assertNotEquals(oldSession, a.sessionId());
            assertEquals(List.of(ConnectionState.SUSPENDED, ConnectionState.LOST, ConnectionState.RECONNECTED),
                    states.states().subList(0, 3), "states of A");
            assertFalse(queue.holderHolds(), "A must not believe it holds the lock after the heal");
            assertFalse(queue.holderWrites(), "the late write of A must be refused");
            queue.releaseHolder();
            queue.releaseWaiter(eb);
            queue.awaitRequeuedSiblingThenRelease(eb);

            checker.assertDirectoryEmpty(server.observer(), dir, WAIT);
            assertEquals(1, checker.refusedWrites());
            checker.assertNoViolations();
        }
    }

    /**
     * A partition of the holder that heals within the session timeout loses nothing: same session, no
     * LOST, no loss reported, the holder still holds with the same node and may write, the waiter still
     * waits and gets the lock after the release.
     */
    @RepeatedTest(2)
    void shortPartitionLosesNothing() throws Exception {
        String dir = "/faults/short-partition-" + System.nanoTime();
        InvariantChecker checker = new InvariantChecker("S3b short partition");
        try (ZkProxy proxy = ZkProxy.to(server.connectString());
             ZkClient a = FaultFixtures.client(proxy.connectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             MutexQueue queue = new MutexQueue("s3b", checker, a, b, dir, WAIT)) {
            FaultFixtures.StateLog states = FaultFixtures.StateLog.of(a);
            long session = a.sessionId();
            queue.holderThenWaiter(server.observer());

            // A partition that resets the holder's connection: the client notices at once (a silent one
            // is noticed only after two thirds of the session timeout, and ZooKeeper's client then waits
            // one to two seconds before it tries again, which would leave too thin a margin here). Its
            // next connection attempt is held by the partition; then the partition heals.
            int attempts = proxy.connectionsAccepted();
            long cut = System.nanoTime();
            proxy.stall();
            proxy.cutAll();
            states.await(ConnectionState.SUSPENDED, cut, WAIT);
            Await.until("a reconnection attempt held by the partition", WAIT, () -> proxy.connectionsAccepted() > attempts);
            proxy.heal();
            states.await(ConnectionState.RECONNECTED, cut, WAIT);
            assertTrue(System.nanoTime() - cut < TimeUnit.MILLISECONDS.toNanos(a.session().timeoutMillis()),
                    "the partition was shorter than the session timeout");
            assertEquals(List.of(ConnectionState.SUSPENDED, ConnectionState.RECONNECTED), states.states(), "states of A");
            assertEquals(session, a.sessionId(), "same session");

            assertTrue(queue.holderHolds(), "A still holds");
            assertEquals(List.of(FaultFixtures.nodesOf(server.observer(), dir, session).get(0)),
                    FaultFixtures.nodesOf(server.observer(), dir, session), "A's one node is still there");
            assertEquals(0, checker.lossesReported(), "no loss reported");
            assertFalse(queue.waiterDone(), "B still waits");
            assertTrue(queue.holderWrites(), "A's writes are still accepted");
            queue.releaseHolder();
            InvariantChecker.Entry eb = queue.awaitWaiter();
            queue.releaseWaiter(eb);
            checker.assertDirectoryEmpty(server.observer(), dir, WAIT);
            checker.assertNoViolations();
        }
    }
}
