package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.Participant;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader election ({@link ZkLeaderElection}) on its worst days:
 *
 * <ul>
 *   <li><b>Leader kill</b>: four participants (four clients, one election each) on a three-server ensemble;
 *       the ensemble's leader server is killed and restarted. Every client is cut off while the servers elect,
 *       so the leading participant steps down ({@code revoked(SUSPENDED)}); with 10 s sessions its session
 *       survives, and it leads again with the same epoch. Had its session been lost, another participant
 *       would lead with a higher epoch.
 *   <li><b>SIGKILL of the leader's JVM</b> ({@link ChildElectionParticipant}): no close, no shutdown hook; only
 *       the ensemble's session expiry ends its leadership. The next participant in line, in this JVM, is elected
 *       within the child's session timeout plus a small margin, with a higher epoch.
 * </ul>
 * Both check the one invariant an election exists for, never two leaders at once, in two independent ways: a
 * {@link LeaderChecker} thread polls every participant's {@link ZkLeaderElection#isLeader()} about every
 * millisecond for the whole run, and a {@link LeadershipHistory} records every {@code elected} / {@code revoked}
 * with {@link System#nanoTime()} and checks, at the end, that the leadership intervals ({@code elected} until
 * {@code revoked}) of different participants never overlap: a participant whose {@code revoked} came before the
 * other's {@code elected} is fine. It also checks that each participant's events alternate, starting with
 * {@code elected}, and that a {@code revoked} names the epoch of the {@code elected} before it.
 *
 * <p>The default runs are short; the {@code soak} runs (tag {@code soak}, {@code mvn -Psoak}) kill the leader
 * three times per run, several runs, and repeat the SIGKILL case ten times.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // a safety net only: every wait below has its own deadline
class ElectionFaultTest {

    private static final Logger log = LoggerFactory.getLogger(ElectionFaultTest.class);

    // ------------------------------------------------------------------ leader-kill scenario

    /** Ticks of 500 ms: elections take about a second, sessions may last up to 10 s. */
    private static final int CLUSTER_TICK_MS = 500;
    /** Long enough for sessions to survive an election. */
    private static final Duration CLUSTER_SESSION = Duration.ofMillis(20 * CLUSTER_TICK_MS);
    private static final Duration CLUSTER_WAIT = Duration.ofSeconds(60);
    private static final int PARTICIPANTS = 4;
    /** How long the run goes on with a stable leader before a kill and after the last one. */
    private static final Duration STEADY = Duration.ofSeconds(1);

    // ------------------------------------------------------------------ SIGKILL scenario

    private static final int TICK_MS = 200;
    /** The child's session: the server ends it this long (plus up to a tick) after its last ping. */
    private static final Duration CHILD_SESSION = Duration.ofSeconds(3);
    /**
     * What the next leader may take beyond the session timeout: the server's expiry tick, the deletion, the watch
     * notification, the read and the listener call, on a loaded machine, where a
     * scheduling stall or a GC pause of a second or two is ordinary (as {@link CrashedClientFaultTest}).
     * It only has to tell the expiry hand-off from a wrong answer: a waiter
     * that missed the deletion's watch never moves, and the test gives up on it 10 s after the session timeout.
     */
    private static final Duration MARGIN = Duration.ofSeconds(5);
    /** How long the test waits for the next leader after the kill before it fails, to report the time if late. */
    private static final Duration ELECTION_WAIT = CHILD_SESSION.plus(Duration.ofSeconds(10));
    /**
     * The earliest a session-expiry hand-off can come after the kill: the client pings every third of its session
     * timeout when idle, and the server expires a session a whole timeout after it last heard of it. An election
     * sooner than this did not wait for the child's session to end.
     */
    private static final Duration EARLIEST_EXPIRY = CHILD_SESSION.dividedBy(3);
    private static final Duration SESSION = Duration.ofMillis(20 * TICK_MS);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(TICK_MS, SESSION);

    /**
     * Four participants through the ensemble's whole connect string, joined in order p0..p3 so that p0 leads; the
     * ensemble's leader server (found with {@code srvr}) is killed, a new server leader is elected among the two
     * others, and the killed server is restarted. Afterwards exactly one participant leads: p0 with its old epoch
     * if its session survived (it should, with 10 s sessions), or another one with a higher epoch; all four still
     * take part; never two leaders at once (polled and recorded); no node is left once they close.
     */
    @Test
    void leadershipSurvivesAnEnsembleLeaderKill() throws Exception {
        leaderKill("election, ensemble leader killed", 1);
    }

    /** Soak: the ensemble's leader killed three times per run. */
    @Tag("soak")
    @RepeatedTest(4)
    void leaderKillSoak() throws Exception {
        leaderKill("election soak, 3 ensemble leader kills", 3);
    }

    /**
     * A leader JVM killed with SIGKILL: the child joins first and leads, then B and C of this JVM queue behind it.
     * After the kill B (next in line) is elected within the child's session timeout plus {@link #MARGIN}, not
     * sooner than {@link #EARLIEST_EXPIRY}, with an epoch above the child's; C keeps waiting; no node of the dead
     * session is left; closing B hands leadership to C with a higher epoch still; nothing is left at the end.
     */
    @Test
    void killedLeaderJvmIsReplacedWithinTheSessionTimeout() throws Exception {
        killedLeaderOnce();
    }

    /** Soak: the SIGKILL scenario, ten times. */
    @Tag("soak")
    @RepeatedTest(10)
    void killedLeaderJvmSoak() throws Exception {
        killedLeaderOnce();
    }

    // ------------------------------------------------------------------ leader kill

    /** @param kills how many times the ensemble's leader is killed (and restarted) */
    private void leaderKill(String scenario, int kills) throws Exception {
        String dir = "/faults/election-failover";
        LeadershipHistory history = new LeadershipHistory(scenario);
        try (TestingCluster cluster = FaultFixtures.cluster(3, CLUSTER_TICK_MS)) {
            cluster.start();
            List<InstanceSpec> all = new ArrayList<>(cluster.getInstances());
            FaultFixtures.awaitQuorum(cluster, all, CLUSTER_WAIT);
            // Closed in this block, while the ensemble still serves their sessions' closing.
            List<ZkClient> clients = new ArrayList<>();
            List<FaultFixtures.StateLog> states = new ArrayList<>();
            Map<String, ZkLeaderElection> elections = new LinkedHashMap<>();
            LeaderChecker checker = new LeaderChecker(scenario, elections);
            try {
                for (int i = 0; i < PARTICIPANTS; i++) {
                    ZkClient client = FaultFixtures.client(cluster.getConnectString(), CLUSTER_SESSION);
                    clients.add(client);
                    states.add(FaultFixtures.StateLog.of(client));
                    String id = "p" + i;
                    ZkLeaderElection election = new ZkLeaderElection(client, dir, id);
                    election.addListener(history.listener(id));
                    elections.put(id, election);
                }
                checker.start();
                ZkLeaderElection first = elections.get("p0");
                int joined = 0;
                for (ZkLeaderElection e : elections.values()) {
                    e.start();
                    int expected = ++joined;
                    Await.until(CLUSTER_WAIT, () -> participantCount(first) == expected,
                            () -> scenario + ": " + e.participantId() + " did not join");
                }
                assertTrue(first.awaitLeadership(CLUSTER_WAIT), scenario + ": p0 joined first but does not lead");
                Await.holds(scenario + ": p0 stays the leader while nothing happens", STEADY, first::isLeader);

                for (int k = 1; k <= kills; k++) {
                    int kill = k;
                    String before = awaitOneLeader(scenario, elections, clients);
                    int b = index(before);
                    long epochBefore = elections.get(before).epoch();
                    long sessionBefore = clients.get(b).sessionId();

                    InstanceSpec leader = FaultFixtures.leader(cluster).orElseThrow();
                    long killedAt = System.nanoTime();
                    history.fault("ensemble leader " + leader.getServerId() + " killed (kill " + k + ") while "
                            + before + " leads with epoch 0x" + Long.toHexString(epochBefore));
                    cluster.killServer(leader);
                    List<InstanceSpec> survivors = new ArrayList<>(all);
                    survivors.remove(leader);
                    InstanceSpec next = FaultFixtures.awaitQuorum(cluster, survivors, CLUSTER_WAIT);
                    log.info("{}: server {} leads the ensemble now; restarting server {}", scenario, next.getServerId(),
                            leader.getServerId());
                    cluster.restartServer(leader);
                    FaultFixtures.awaitQuorum(cluster, all, CLUSTER_WAIT);

                    String after = awaitOneLeader(scenario, elections, clients);
                    long epochAfter = elections.get(after).epoch();
                    boolean sessionKept = clients.get(b).sessionId() == sessionBefore
                            && states.get(b).firstAt(ConnectionState.LOST, killedAt) < 0;
                    long revokedAt = history.firstAt(before, false, killedAt);
                    long electedAt = history.firstAt(after, true, killedAt);
                    if (electedAt < 0) {
                        log.info("MEASURED {}: kill {}: {} led on without a break (it was never told revoked)",
                                scenario, k, after);
                    } else {
                        log.info("MEASURED {}: kill {}: leadership back after {} ms ({} leads, epoch 0x{}, was {} with"
                                + " 0x{}; {} stepped down {} ms after the kill, leaderless for {} ms); session of {} {}",
                                scenario, k, millis(electedAt - killedAt), after, Long.toHexString(epochAfter), before,
                                Long.toHexString(epochBefore), before, revokedAt < 0 ? "?" : millis(revokedAt - killedAt),
                                revokedAt < 0 ? "?" : millis(electedAt - revokedAt), before, sessionKept ? "kept" : "LOST");
                    }
                    if (sessionKept) {
                        assertEquals(before, after, scenario + ": the leader's session survived, so it leads still");
                        assertEquals(epochBefore, epochAfter, scenario + ": the same session leads with the same epoch");
                        // Stepped down on SUSPENDED (as often as the connection dropped), back on RECONNECTED.
                        List<String> heard = history.describeSince(before, killedAt);
                        Set<String> allowed = Set.of("revoked " + epochBefore + " SUSPENDED", "elected " + epochBefore);
                        assertTrue(allowed.containsAll(heard) && (heard.isEmpty()
                                || heard.get(heard.size() - 1).equals("elected " + epochBefore)),
                                scenario + ": " + before + " heard after the kill " + heard);
                    } else {
                        assertTrue(epochAfter > epochBefore, scenario + ": leadership moved from " + before + " (0x"
                                + Long.toHexString(epochBefore) + ") to " + after + " with epoch 0x"
                                + Long.toHexString(epochAfter) + ", not higher");
                    }
                    // Everyone still takes part (a participant whose session was lost joins again), and
                    // ZooKeeper agrees on who leads.
                    Await.until(CLUSTER_WAIT, () -> participantCount(first) == PARTICIPANTS,
                            () -> scenario + ": participants after kill " + kill + ": " + participantsOrError(first));
                    List<Participant> ps = first.participants();
                    assertEquals(elections.keySet(), ps.stream().map(Participant::id).collect(Collectors.toSet()),
                            scenario + ": every participant takes part once: " + ps);
                    assertEquals(new Participant(after, epochAfter, true), ps.get(0), scenario + ": " + ps);
                    ZkLeaderElection leading = elections.get(after);
                    Await.holds(scenario + ": " + after + " stays the leader while nothing happens", STEADY,
                            leading::isLeader);
                }

                // Leave: followers first, so no hand-over happens; the leader hears revoked(CLOSED) first.
                String leader = awaitOneLeader(scenario, elections, clients);
                long epoch = elections.get(leader).epoch();
                for (ZkLeaderElection e : elections.values()) {
                    if (!e.participantId().equals(leader)) {
                        e.close();
                    }
                }
                assertTrue(elections.get(leader).isLeader(), scenario + ": the others left; " + leader + " still leads");
                elections.get(leader).close();
                assertFalse(elections.get(leader).isLeader(), scenario + ": closed, " + leader + " no longer leads");
                Await.until(WAIT, () -> lastOf(history.describeAll(leader)).equals("revoked " + epoch + " CLOSED"),
                        () -> scenario + ": " + leader + " heard " + history.describeAll(leader));
                ZooKeeper look = clients.get(0).zooKeeper();
                Await.until(WAIT, () -> InvariantChecker.children(look, dir).isEmpty(),
                        () -> scenario + ": " + dir + " still holds " + InvariantChecker.children(look, dir));
            } finally {
                checker.stop();
                elections.values().forEach(ZkLeaderElection::close);
                clients.forEach(ZkClient::close);
            }
            checker.assertNoViolations();
            history.assertNoViolations();
        }
    }

    /**
     * Waits until exactly one participant leads and every client is connected.
     *
     * @return the leader's id
     */
    private static String awaitOneLeader(String scenario, Map<String, ZkLeaderElection> elections,
            List<ZkClient> clients) {
        Await.until(CLUSTER_WAIT, () -> leaders(elections).size() == 1
                && clients.stream().allMatch(c -> c.state() != null && c.state().isConnected()),
                () -> scenario + ": leaders " + leaders(elections) + ", client states "
                        + clients.stream().map(c -> String.valueOf(c.state())).toList());
        List<String> leaders = leaders(elections);
        assertEquals(1, leaders.size(), scenario + ": leaders " + leaders);
        return leaders.get(0);
    }

    /** @return the ids of the participants whose {@code isLeader()} is true now */
    private static List<String> leaders(Map<String, ZkLeaderElection> elections) {
        List<String> leading = new ArrayList<>();
        for (Map.Entry<String, ZkLeaderElection> e : elections.entrySet()) {
            if (e.getValue().isLeader()) {
                leading.add(e.getKey());
            }
        }
        return leading;
    }

    private static int index(String participantId) {
        return Integer.parseInt(participantId.substring(1));
    }

    /** @return how many participants ZooKeeper lists, or -1 if it cannot be read now */
    private static int participantCount(ZkLeaderElection e) {
        try {
            return e.participants().size();
        } catch (RuntimeException ex) {
            return -1;
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String participantsOrError(ZkLeaderElection e) {
        try {
            return e.participants().toString();
        } catch (Exception ex) {
            return ex.toString();
        }
    }

    // ------------------------------------------------------------------ SIGKILL

    private void killedLeaderOnce() throws Exception {
        String dir = "/faults/election-crash-" + System.nanoTime();
        String scenario = "election SIGKILL of the leader JVM";
        LeadershipHistory history = new LeadershipHistory(scenario);
        ZooKeeper look = server.observer();
        Path childLog = Files.createTempFile("child-election-participant", ".log");
        Process child = null;
        Map<String, ZkLeaderElection> elections = new LinkedHashMap<>();
        LeaderChecker checker = new LeaderChecker(scenario, elections);
        try (ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             ZkClient c = FaultFixtures.client(server.connectString(), SESSION);
             LockThread reader = new LockThread("election-child-stdout")) {
            // The child joins first, so it leads.
            child = startChild(dir, childLog);
            Process started = child;
            String leads = reader.await(reader.submit(() -> firstLine(started)), WAIT);
            long childElectedAt = System.nanoTime();
            assertTrue(leads != null && leads.startsWith("LEADS "),
                    "child did not report LEADS but " + leads + "; its log:\n" + Files.readString(childLog));
            String[] words = leads.trim().split(" ");
            assertEquals(3, words.length, "child's report: " + leads);
            long childSession = Long.parseLong(words[1]);
            long childEpoch = Long.parseLong(words[2]);
            List<String> childNodes = FaultFixtures.nodesOf(look, dir, childSession);
            assertEquals(1, childNodes.size(), "the child's node: " + childNodes);
            Stat childNode = look.exists(dir + "/" + childNodes.get(0), false);
            assertEquals(childEpoch, childNode.getCzxid(), "the child's epoch is its node's czxid");
            assertNotEquals(b.sessionId(), childSession);
            history.foreignElected("child", childEpoch, childElectedAt);

            // B, then C, queue behind it.
            ZkLeaderElection eb = new ZkLeaderElection(b, dir, "B");
            ZkLeaderElection ec = new ZkLeaderElection(c, dir, "C");
            eb.addListener(history.listener("B"));
            ec.addListener(history.listener("C"));
            elections.put("B", eb);
            elections.put("C", ec);
            checker.start();
            eb.start();
            FaultFixtures.awaitChildren("B queued behind the child", look, dir, 2, WAIT);
            ec.start();
            FaultFixtures.awaitChildren("C queued behind B", look, dir, 3, WAIT);
            List<Participant> queued = eb.participants();
            assertEquals(List.of(new Participant("child", childEpoch, true), new Participant("B", queued.get(1).epoch(),
                    false), new Participant("C", queued.get(2).epoch(), false)), queued, "queue before the kill");
            assertFalse(eb.isLeader() || ec.isLeader(), "B or C leads while the child does");

            long killedAt = System.nanoTime();
            history.fault("leader JVM killed (SIGKILL)");
            child.destroyForcibly();
            assertTrue(child.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the child did not die");
            history.foreignRevoked("child", childEpoch, System.nanoTime()); // a dead process leads nothing

            Await.until(ELECTION_WAIT, () -> history.firstAt("B", true, killedAt) >= 0,
                    () -> scenario + ": B not elected " + ELECTION_WAIT.toMillis() + " ms after the kill; directory "
                            + InvariantChecker.children(look, dir));
            long tookMillis = millis(history.firstAt("B", true, killedAt) - killedAt);
            log.info("MEASURED elected after SIGKILL: {} ms (child session timeout {} ms, tick {} ms)", tookMillis,
                    CHILD_SESSION.toMillis(), TICK_MS);
            assertTrue(tookMillis <= CHILD_SESSION.plus(MARGIN).toMillis(), "B was elected " + tookMillis
                    + " ms after the kill; the child's session timeout is " + CHILD_SESSION.toMillis() + " ms");
            assertTrue(tookMillis >= EARLIEST_EXPIRY.toMillis(), "B was elected " + tookMillis
                    + " ms after the kill: sooner than the child's session could have expired");
            assertTrue(eb.awaitLeadership(WAIT), "B was told elected but does not lead");
            long epochB = eb.epoch();
            assertTrue(epochB > childEpoch, "epochs grow: B's 0x" + Long.toHexString(epochB) + " after the child's 0x"
                    + Long.toHexString(childEpoch));
            assertFalse(ec.isLeader(), "C leads beside B");
            assertEquals(List.of(), FaultFixtures.nodesOf(look, dir, childSession), "no node of the dead session");
            assertEquals(Optional.of(new Participant("B", epochB, true)), ec.leader(), "ZooKeeper names B");

            // The queue goes on: B leaves, C leads with a higher epoch still.
            eb.close();
            assertTrue(ec.awaitLeadership(WAIT), "C does not lead after B left");
            long epochC = ec.epoch();
            assertTrue(epochC > epochB, "epochs grow: C's 0x" + Long.toHexString(epochC) + " after B's 0x"
                    + Long.toHexString(epochB));
            Await.until(WAIT, () -> history.describeAll("B").equals(List.of("elected " + epochB, "revoked " + epochB
                    + " CLOSED")), () -> "B heard " + history.describeAll("B"));
            ec.close();
            Await.until(WAIT, () -> history.describeAll("C").equals(List.of("elected " + epochC, "revoked " + epochC
                    + " CLOSED")), () -> "C heard " + history.describeAll("C"));
            Await.until(WAIT, () -> InvariantChecker.children(look, dir).isEmpty(),
                    () -> scenario + ": " + dir + " still holds " + InvariantChecker.children(look, dir));
        } finally {
            checker.stop();
            elections.values().forEach(ZkLeaderElection::close);
            if (child != null) {
                child.destroyForcibly();
            }
            Files.deleteIfExists(childLog);
        }
        checker.assertNoViolations();
        history.assertNoViolations();
    }

    /** Starts {@link ChildElectionParticipant} in a new JVM on this JVM's class path; its stderr goes to {@code log}. */
    private static Process startChild(String dir, Path log) throws IOException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java,
                "-XX:TieredStopAtLevel=1", // starts faster; the child runs a few requests only
                "-cp", System.getProperty("java.class.path"),
                ChildElectionParticipant.class.getName(),
                server.connectString(), dir, "child", Long.toString(CHILD_SESSION.toMillis()));
        pb.redirectError(log.toFile());
        return pb.start();
    }

    /** @return the child's first stdout line, or null if it ended without one */
    private static String firstLine(Process child) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        return out.readLine();
    }

    private static String lastOf(List<String> list) {
        return list.isEmpty() ? "" : list.get(list.size() - 1);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    // ------------------------------------------------------------------ the checks

    /**
     * Polls every participant's {@link ZkLeaderElection#isLeader()} about every millisecond on a thread of its own,
     * from {@link #start()} to {@link #stop()}, and records every poll that found more than one leader. The polls
     * of one round are not atomic, but leadership can only move after a session ended (seconds), so a round that
     * finds two leaders found two at once. Counts rounds with no leader too (the steps-down during a fault).
     */
    static final class LeaderChecker {
        private final String scenario;
        private final Map<String, ZkLeaderElection> elections;
        private final List<String> violations = new ArrayList<>();
        private final Thread thread;
        private final long start = System.nanoTime();
        private volatile boolean running = true;
        private volatile Throwable failure;
        private long rounds;
        private long leaderless;
        private long leaderChanges;

        /** @param elections the participants to poll, by id; read on every round (add them before they start) */
        LeaderChecker(String scenario, Map<String, ZkLeaderElection> elections) {
            this.scenario = scenario;
            this.elections = elections;
            this.thread = new Thread(this::poll, "election-checker");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void poll() {
            try {
                String last = "";
                while (running) {
                    List<String> leading = new ArrayList<>();
                    for (Map.Entry<String, ZkLeaderElection> e : List.copyOf(elections.entrySet())) {
                        if (e.getValue().isLeader()) {
                            leading.add(e.getKey());
                        }
                    }
                    synchronized (this) {
                        rounds++;
                        if (leading.isEmpty()) {
                            leaderless++;
                        } else if (leading.size() > 1) {
                            violations.add("+" + millis(System.nanoTime() - start) + " ms: " + leading + " all lead");
                        } else if (!leading.get(0).equals(last)) {
                            leaderChanges++;
                            last = leading.get(0);
                        }
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        /** Stops polling; idempotent. */
        void stop() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }

        /**
         * @throws AssertionError if two participants ever led at once, the checker failed, or it hardly polled
         *     (fewer than 100 rounds, or never saw a leader: a checker that did not look proves little). Not a
         *     rate: on a busy 2-core machine one round can take 10 ms and more, which makes the checker slower,
         *     never wrong.
         */
        synchronized void assertNoViolations() {
            long elapsedMillis = millis(System.nanoTime() - start);
            String summary = scenario + ": isLeader() polled in " + rounds + " rounds over " + elapsedMillis
                    + " ms, " + leaderless + " without a leader, " + leaderChanges + " change(s) of the leader seen";
            log.info("REPORT {}", summary);
            assertTrue(failure == null, scenario + ": the checker failed: " + failure);
            assertTrue(violations.isEmpty(), scenario + ": two leaders at once, " + violations.size() + " time(s): "
                    + violations.subList(0, Math.min(10, violations.size())) + "\n" + summary);
            assertTrue(rounds >= 100 && leaderChanges >= 1, "the checker hardly ran: " + summary);
        }
    }

    /**
     * Every {@code elected} and {@code revoked} of every participant, in one list, each with {@link
     * System#nanoTime()} when its listener was called. Leaderships of other processes enter as {@linkplain
     * #foreignElected foreign} events. Thread-safe.
     */
    static final class LeadershipHistory {

        /** One event; {@code reason} is null for {@code elected}. */
        record Event(String who, boolean elected, long epoch, RevokeReason reason, long nanos) {
            String describe() {
                return elected ? "elected " + epoch : "revoked " + epoch + " " + (reason == null ? "DIED" : reason);
            }
        }

        private final String scenario;
        private final long start = System.nanoTime();
        private final List<Event> events = new ArrayList<>();
        private final List<String> faults = new ArrayList<>();

        LeadershipHistory(String scenario) {
            this.scenario = scenario;
        }

        /** @return a listener that records the events of participant {@code who} */
        LeadershipListener listener(String who) {
            return new LeadershipListener() {
                @Override
                public void elected(long epoch) {
                    add(new Event(who, true, epoch, null, System.nanoTime()));
                }

                @Override
                public void revoked(long epoch, RevokeReason reason) {
                    add(new Event(who, false, epoch, reason, System.nanoTime()));
                }
            };
        }

        /** Another process's participant {@code who} led from {@code nanos} on. */
        void foreignElected(String who, long epoch, long nanos) {
            add(new Event(who, true, epoch, null, nanos));
        }

        /** Another process's participant {@code who} stopped leading at {@code nanos} (it died, say). */
        void foreignRevoked(String who, long epoch, long nanos) {
            add(new Event(who, false, epoch, null, nanos));
        }

        private synchronized void add(Event e) {
            events.add(e);
            log.info("{}: +{} ms {} {} (0x{})", scenario, millis(e.nanos - start), e.who, e.describe(),
                    Long.toHexString(e.epoch));
        }

        synchronized void fault(String what) {
            faults.add("+" + millis(System.nanoTime() - start) + " ms: " + what);
            log.info("{}: fault: {}", scenario, what);
        }

        /** @return when {@code who} was first told {@code elected} (or {@code revoked}) at or after {@code since}, or -1 */
        synchronized long firstAt(String who, boolean elected, long since) {
            for (Event e : events) {
                if (e.who.equals(who) && e.elected == elected && e.nanos - since >= 0) {
                    return e.nanos;
                }
            }
            return -1;
        }

        /** @return {@code who}'s events at or after {@code since}, described */
        synchronized List<String> describeSince(String who, long since) {
            return events.stream().filter(e -> e.who.equals(who) && e.nanos - since >= 0).map(Event::describe).toList();
        }

        /** @return all of {@code who}'s events, described */
        synchronized List<String> describeAll(String who) {
            return events.stream().filter(e -> e.who.equals(who)).map(Event::describe).toList();
        }

        /** @return every broken invariant: overlapping leaderships, events out of alternation */
        synchronized List<String> violations() {
            List<String> found = new ArrayList<>();
            // Each participant: elected, revoked, elected, ...; a revoked names the epoch it ends.
            Map<String, List<long[]>> intervals = new LinkedHashMap<>(); // {from, to, epoch}; to = MAX while open
            Map<String, Event> open = new LinkedHashMap<>();
            for (Event e : events) {
                List<long[]> mine = intervals.computeIfAbsent(e.who, k -> new ArrayList<>());
                Event o = open.get(e.who);
                if (e.elected) {
                    if (o != null) {
                        found.add(e.who + ": " + e.describe() + " while leading since " + o.describe());
                        continue;
                    }
                    open.put(e.who, e);
                    mine.add(new long[] {e.nanos, Long.MAX_VALUE, e.epoch});
                } else {
                    if (o == null) {
                        found.add(e.who + ": " + e.describe() + " without elected before it");
                        continue;
                    }
                    if (o.epoch != e.epoch) {
                        found.add(e.who + ": " + e.describe() + " ends a leadership of epoch " + o.epoch);
                    }
                    open.remove(e.who);
                    mine.get(mine.size() - 1)[1] = e.nanos;
                }
            }
            // Different participants: their leaderships never overlap in time.
            List<String> who = new ArrayList<>(intervals.keySet());
            for (int i = 0; i < who.size(); i++) {
                for (int j = i + 1; j < who.size(); j++) {
                    for (long[] a : intervals.get(who.get(i))) {
                        for (long[] b : intervals.get(who.get(j))) {
                            if (a[0] < b[1] && b[0] < a[1]) {
                                found.add(who.get(i) + " (epoch 0x" + Long.toHexString(a[2]) + ", " + span(a) + ") and "
                                        + who.get(j) + " (epoch 0x" + Long.toHexString(b[2]) + ", " + span(b)
                                        + ") led at the same time");
                            }
                        }
                    }
                }
            }
            // Epochs: a new leadership (a new epoch) always has a higher one than every earlier leadership.
            Set<Long> seen = new HashSet<>();
            long highest = Long.MIN_VALUE;
            for (Event e : events) {
                if (e.elected && seen.add(e.epoch)) {
                    if (e.epoch < highest) {
                        found.add(e.who + " elected with epoch 0x" + Long.toHexString(e.epoch) + " after epoch 0x"
                                + Long.toHexString(highest));
                    }
                    highest = Math.max(highest, e.epoch);
                }
            }
            return found;
        }

        private String span(long[] interval) {
            return "+" + millis(interval[0] - start) + " ms .. "
                    + (interval[1] == Long.MAX_VALUE ? "still" : "+" + millis(interval[1] - start) + " ms");
        }

        /** @throws AssertionError listing every violation, if any */
        void assertNoViolations() {
            List<String> found = violations();
            String summary;
            synchronized (this) {
                summary = scenario + ": " + events.size() + " events, faults " + faults;
            }
            log.info("REPORT {}", summary);
            if (!found.isEmpty()) {
                throw new AssertionError(scenario + ": " + found.size() + " violation(s):\n  "
                        + String.join("\n  ", found) + "\n" + summary);
            }
        }
    }
}
