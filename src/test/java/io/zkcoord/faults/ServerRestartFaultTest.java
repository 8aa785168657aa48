package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Scenario 6: the (only) server restarts with the same data directory while a lock is held and another
 * client waits for it.
 */
class ServerRestartFaultTest {

    private static final int TICK_MS = 500;
    /** Long enough for the sessions to outlive the restart. */
    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(30);

    /**
     * Holds survive a server restart when their sessions survive: the holder still holds (same node, no
     * loss reported), the waiter still waits, and gets the lock once the holder releases it.
     */
    @RepeatedTest(2)
    void holdsSurviveARestartWithTheirSessions() throws Exception {
        String dir = "/faults/restart";
        InvariantChecker checker = new InvariantChecker("S6 server restart");
        try (TestingServer server = FaultFixtures.server(TICK_MS);
             ZkClient a = FaultFixtures.client(server.getConnectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.getConnectString(), SESSION);
             MutexQueue queue = new MutexQueue("s6", checker, a, b, dir, WAIT)) {
            FaultFixtures.StateLog statesA = FaultFixtures.StateLog.of(a);
            FaultFixtures.StateLog statesB = FaultFixtures.StateLog.of(b);
            long sessionA = a.sessionId();
            long sessionB = b.sessionId();
            InvariantChecker.Entry ea = queue.holderThenWaiter(a.zooKeeper());

            long restart = System.nanoTime();
            server.restart();
            statesA.await(ConnectionState.SUSPENDED, restart, WAIT);
            statesA.await(ConnectionState.RECONNECTED, restart, WAIT);
            statesB.await(ConnectionState.RECONNECTED, restart, WAIT);
            assertEquals(sessionA, a.sessionId(), "A keeps its session");
            assertEquals(sessionB, b.sessionId(), "B keeps its session");
            assertEquals(List.of(ConnectionState.SUSPENDED, ConnectionState.RECONNECTED), statesA.states(), "states of A");

            assertTrue(queue.holderHolds(), "A still holds after the restart");
            List<String> nodes = InvariantChecker.children(a.zooKeeper(), dir);
            assertEquals(2, nodes.size(), "both nodes survive: " + nodes);
            List<String> ofA = FaultFixtures.nodesOf(a.zooKeeper(), dir, sessionA);
            assertEquals(1, ofA.size(), "A's node is still there: " + nodes);
            Stat nodeA = a.zooKeeper().exists(dir + "/" + ofA.get(0), false);
            assertEquals(ea.token(), nodeA.getCzxid(), "A's node is the one it locked with");
            assertEquals(0, checker.lossesReported(), "no loss listener ran");
            assertFalse(queue.waiterDone(), "B still waits");
            assertEquals(1, checker.acquisitions());
            assertTrue(queue.holderWrites(), "A's writes are still accepted");

            queue.releaseHolder();
            InvariantChecker.Entry eb = queue.awaitWaiter();
            assertTrue(eb.token() > ea.token(), "tokens grow from one holder to the next");
            queue.releaseWaiter(eb);
            checker.assertDirectoryEmpty(a.zooKeeper(), dir, WAIT);
            checker.assertNoViolations();
        }
    }
}
