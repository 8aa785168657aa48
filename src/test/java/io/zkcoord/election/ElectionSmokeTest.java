package io.zkcoord.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The election end to end on one server: the first participant leads, the next takes over with a higher epoch. */
@Timeout(60)
class ElectionSmokeTest {

    /** Three participants: the first leads; closing it hands leadership to the second, with a higher epoch; listeners alternate. */
    @Test
    void leadershipMovesInQueueOrder() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            List<ZkClient> clients = new ArrayList<>();
            List<ZkLeaderElection> elections = new ArrayList<>();
            List<List<String>> heard = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    ZkClient c = ZkClient.builder().connectString(server.getConnectString()).build();
                    clients.add(c);
                    ZkLeaderElection e = new ZkLeaderElection(c, "/smoke/election", "p" + i);
                    List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());
                    e.addListener(new LeadershipListener() {
                        @Override
                        public void elected(long epoch) {
                            log.add("elected " + epoch);
                        }

                        @Override
                        public void revoked(long epoch, RevokeReason reason) {
                            log.add("revoked " + epoch + " " + reason);
                        }
                    });
                    heard.add(log);
                    elections.add(e);
                    e.start();
                    Await.until("p" + i + " queued", Duration.ofSeconds(10), () -> participants(elections.get(0)) == clients.size());
                }
                assertTrue(elections.get(0).awaitLeadership(Duration.ofSeconds(10)));
                assertFalse(elections.get(1).isLeader());
                long first = elections.get(0).epoch();
                assertEquals("p0", elections.get(1).leader().orElseThrow().id());
                assertEquals(List.of("p0", "p1", "p2"), elections.get(2).participants().stream().map(Participant::id).toList());
                assertThrows(IllegalStateException.class, () -> elections.get(1).epoch());
                assertThrows(IllegalStateException.class, () -> elections.get(1).start());

                elections.get(0).close();
                assertTrue(elections.get(1).awaitLeadership(Duration.ofSeconds(10)));
                long second = elections.get(1).epoch();
                assertTrue(second > first);
                Await.until("p0 heard elected then revoked(CLOSED)", Duration.ofSeconds(10),
                        () -> heard.get(0).equals(List.of("elected " + first, "revoked " + first + " CLOSED")));
                Await.until("p1 heard elected", Duration.ofSeconds(10), () -> heard.get(1).equals(List.of("elected " + second)));
                assertTrue(heard.get(2).isEmpty());
                assertEquals(List.of("p1", "p2"), elections.get(2).participants().stream().map(Participant::id).toList());
            } finally {
                elections.forEach(ZkLeaderElection::close);
                clients.forEach(ZkClient::close);
            }
        }
    }

    /** close() called by a listener on elected: it returns at once, and the listener hears revoked(CLOSED). */
    @Test
    void closeFromAListener() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient a = ZkClient.builder().connectString(server.getConnectString()).build()) {
            ZkLeaderElection ea = new ZkLeaderElection(a, "/smoke/close-in-listener", "a");
            List<String> heard = java.util.Collections.synchronizedList(new ArrayList<>());
            ea.addListener(new LeadershipListener() {
                @Override
                public void elected(long epoch) {
                    heard.add("elected");
                    long start = System.nanoTime();
                    ea.close();
                    // Room for a busy machine: a close() that waited for this listener's own thread would never return.
                    heard.add("closed in " + (System.nanoTime() - start < 5_000_000_000L ? "time" : "too long"));
                }

                @Override
                public void revoked(long epoch, RevokeReason reason) {
                    heard.add("revoked " + reason);
                }
            });
            ea.start();
            Await.until("elected, revoked(CLOSED), closed", Duration.ofSeconds(10),
                    () -> heard.equals(List.of("elected", "revoked CLOSED", "closed in time")));
            Await.until("no node left", Duration.ofSeconds(10), () -> {
                try {
                    return a.zooKeeper().getChildren("/smoke/close-in-listener", false).isEmpty();
                } catch (Exception e) {
                    return true;
                }
            });
        }
    }

    /**
     * Three listeners, the middle one closes the election inside elected(): each listener's calls
     * still alternate. The first and the closer hear elected then revoked(CLOSED); the third, not yet
     * told elected when the election closed, hears nothing (it never believes it leads).
     */
    @Test
    void closeFromOneListenerKeepsEveryListenerInTurn() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient a = ZkClient.builder().connectString(server.getConnectString()).build()) {
            ZkLeaderElection ea = new ZkLeaderElection(a, "/smoke/close-in-one-listener", "a");
            List<String> first = java.util.Collections.synchronizedList(new ArrayList<>());
            List<String> closer = java.util.Collections.synchronizedList(new ArrayList<>());
            List<String> third = java.util.Collections.synchronizedList(new ArrayList<>());
            ea.addListener(recording(first, () -> { }));
            ea.addListener(recording(closer, ea::close));
            ea.addListener(recording(third, () -> { }));
            ea.start();
            Await.until("the closer heard elected then revoked(CLOSED)", Duration.ofSeconds(10),
                    () -> closer.equals(List.of("elected", "revoked CLOSED")));
            assertFalse(ea.isLeader());
            // The third listener would be told at once, on the thread that runs the closer, if at all.
            try {
                Await.holds("the listener after the closer hears nothing", Duration.ofMillis(500), third::isEmpty);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; it heard " + third, e);
            }
            assertEquals(List.of("elected", "revoked CLOSED"), first, "the listener before the closer");
            assertEquals(List.of("elected", "revoked CLOSED"), closer, "the closer");
        }
    }

    /** A listener that records what it hears and runs {@code onElected} after recording elected. */
    private static LeadershipListener recording(List<String> heard, Runnable onElected) {
        return new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                heard.add("elected");
                onElected.run();
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                heard.add("revoked " + reason);
            }
        };
    }

    private static List<String> ids(ZkLeaderElection e) {
        try {
            return e.participants().stream().map(Participant::id).toList();
        } catch (Exception ex) {
            return List.of();
        }
    }

    private static int participants(ZkLeaderElection e) {
        try {
            return e.participants().size();
        } catch (Exception ex) {
            return -1;
        }
    }
}
