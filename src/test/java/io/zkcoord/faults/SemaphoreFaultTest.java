package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.semaphore.ZkSemaphore;
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
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The semaphore ({@link ZkSemaphore}) on its worst days:
 *
 * <ul>
 *   <li><b>SIGKILL of a holder JVM</b> ({@link ChildSemaphoreHolder}): no release, no close, no shutdown hook;
 *       only the ensemble's session expiry frees its permits. The waiters queued in this JVM get exactly the
 *       freed permits, in FIFO order, within the session timeout plus a small margin, and never more than the
 *       permits are held at once.
 *   <li><b>Leader kill under load</b>: six clients on a two-permit semaphore of a three-server ensemble run
 *       acquire / work / release cycles while the leader is killed and restarted. Every cycle completes and
 *       no more than two leases are inside at once, unless one of them was reported lost.
 * </ul>
 * Both count the leases inside the critical section with a {@link PermitLedger}: a lease enters right after
 * its acquisition and leaves right before its release, or when its {@link ZkLease#whenLost()} fires (as
 * {@link InvariantChecker} does for lost holds: a holder cut off from ZooKeeper learns of its loss only some
 * time after the ensemble handed its permit on, so a crowd that includes a lease whose loss is reported,
 * before or after, is tolerated). Both end with no node left in the semaphore's directory.
 *
 * <p>The default runs are short; the {@code soak} runs (tag {@code soak}, {@code mvn -Psoak}) repeat the
 * SIGKILL cases and do ten times the cycles with three leader kills per run.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // a safety net only: every wait below has its own deadline
class SemaphoreFaultTest {

    private static final Logger log = LoggerFactory.getLogger(SemaphoreFaultTest.class);

    // ------------------------------------------------------------------ SIGKILL scenario

    private static final int TICK_MS = 200;
    /** The child's session: the server frees its permits this long (plus up to a tick) after its last ping. */
    private static final Duration CHILD_SESSION = Duration.ofSeconds(3);
    /**
     * What a waiter may take beyond the session timeout: the server's expiry tick, the deletion, the watch
     * notification and the waiters' reads, on a loaded machine, where a
     * scheduling stall or a GC pause of a second or two is ordinary (as {@link CrashedClientFaultTest}).
     * It only has to tell the expiry hand-off from a wrong answer: a waiter
     * that missed the deletion's watch never moves, and the test gives up on it 10 s after the session timeout.
     */
    private static final Duration MARGIN = Duration.ofSeconds(5);
    /** How long the test waits for a grant after the kill before it fails, to report the time if it is late. */
    private static final Duration GRANT_WAIT = CHILD_SESSION.plus(Duration.ofSeconds(10));
    /**
     * The earliest a session-expiry hand-off can come after the kill: the client pings every third of its
     * session timeout when idle, and the server expires a session a whole timeout after it last heard of it.
     * A grant sooner than this did not wait for the child's session to end.
     */
    private static final Duration EARLIEST_EXPIRY = CHILD_SESSION.dividedBy(3);
    private static final Duration SESSION = Duration.ofMillis(20 * TICK_MS);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(TICK_MS, SESSION);

    // ------------------------------------------------------------------ leader-kill scenario

    /** Ticks of 500 ms: elections take about a second, sessions may last up to 10 s. */
    private static final int CLUSTER_TICK_MS = 500;
    /** Long enough for sessions to survive an election. */
    private static final Duration CLUSTER_SESSION = Duration.ofMillis(20 * CLUSTER_TICK_MS);
    private static final Duration CLUSTER_WAIT = Duration.ofSeconds(60);
    private static final int CLIENTS = 6;
    private static final int PERMITS = 2;
    /** Time spent inside per cycle, so that two leases are inside together. */
    private static final long HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(3);

    /**
     * A holder JVM killed with SIGKILL frees its permits with its session: with {@code permits} permits, the
     * child holds {@code childLeases} of them and this JVM holds the rest (client a); two waiters (clients b,
     * then c) queue behind. After the kill the first {@code childLeases} waiters get the freed permits, each
     * within the session timeout plus {@link #MARGIN} (and not sooner than {@link #EARLIEST_EXPIRY}), with tokens
     * above the child's; a waiter beyond the freed permits keeps waiting until a holder of this JVM releases;
     * no node of the dead session is left, and nothing at all once everyone released.
     */
    @ParameterizedTest(name = "permits={0}, child holds {1}")
    @CsvSource({"1, 1", "2, 1", "2, 2"})
    void killedHolderJvmFreesItsPermitsWithinTheSessionTimeout(int permits, int childLeases) throws Exception {
        killedHolderOnce(permits, childLeases);
    }

    /** Soak: the three SIGKILL cases, seven times each. */
    @Tag("soak")
    @ParameterizedTest(name = "round {0}: permits={1}, child holds {2}")
    @MethodSource("soakCases")
    void killedHolderJvmSoak(int round, int permits, int childLeases) throws Exception {
        killedHolderOnce(permits, childLeases);
    }

    static Stream<Arguments> soakCases() {
        return IntStream.rangeClosed(1, 7).boxed().flatMap(round -> Stream.of(
                Arguments.of(round, 1, 1), Arguments.of(round, 2, 1), Arguments.of(round, 2, 2)));
    }

    /**
     * Six clients (one thread each) run acquire / work / release cycles on a two-permit semaphore of a
     * three-server ensemble through the whole connect string; the leader (found with {@code srvr}) is killed
     * once mid-run and restarted. Every client completes its cycles; at no moment are more than two leases
     * inside among those not reported lost, and two are inside together at some point (the semaphore does
     * share); all fencing tokens differ and grow for each client; no node is left.
     */
    @Test
    void semaphoreRidesOutALeaderKill() throws Exception {
        failover("semaphore, 2 permits, leader killed", 20, 1);
    }

    /** Soak: the leader-kill scenario with ten times the cycles and three leader kills per run. */
    @Tag("soak")
    @RepeatedTest(5)
    void semaphoreSoak() throws Exception {
        failover("semaphore soak, 2 permits, 3 leader kills", 150, 3);
    }

    // ------------------------------------------------------------------ SIGKILL

    private void killedHolderOnce(int permits, int childLeases) throws Exception {
        String dir = "/faults/sem-crash-" + System.nanoTime();
        String scenario = "semaphore SIGKILL, permits=" + permits + ", child holds " + childLeases;
        PermitLedger ledger = new PermitLedger(scenario, permits);
        ZooKeeper look = server.observer();
        Path childLog = Files.createTempFile("child-semaphore-holder", ".log");
        Process child = null;
        try (ZkClient a = FaultFixtures.client(server.connectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             ZkClient c = FaultFixtures.client(server.connectString(), SESSION);
             LockThread reader = new LockThread("sem-child-stdout")) {
            ZkSemaphore sa = new ZkSemaphore(a, dir, permits);
            ZkSemaphore sb = new ZkSemaphore(b, dir, permits);
            ZkSemaphore sc = new ZkSemaphore(c, dir, permits);

            // This JVM's holders first, then the child's: every permit is taken.
            List<PermitLedger.Holding> ours = new ArrayList<>();
            for (int i = 0; i < permits - childLeases; i++) {
                ours.add(ledger.enter("A" + i, sa.acquire()));
            }
            child = startChild(dir, permits, childLeases, childLog);
            Process started = child;
            String held = reader.await(reader.submit(() -> firstLine(started)), WAIT);
            assertTrue(held != null && held.startsWith("HELD "),
                    "child did not report HELD but " + held + "; its log:\n" + Files.readString(childLog));
            String[] words = held.trim().split(" ");
            assertEquals(2 + childLeases, words.length, "child's report: " + held);
            long childSession = Long.parseLong(words[1]);
            Set<Long> childTokens = new HashSet<>();
            List<PermitLedger.Holding> childHolds = new ArrayList<>();
            for (int i = 2; i < words.length; i++) {
                long token = Long.parseLong(words[i]);
                childTokens.add(token);
                childHolds.add(ledger.enterForeign("child", token));
            }
            assertNotEquals(a.sessionId(), childSession);
            assertEquals(childTokens, czxids(look, dir, FaultFixtures.nodesOf(look, dir, childSession)),
                    "the child's tokens are the czxids of its nodes, owned by its session");
            long highestBefore = ledger.highestToken();

            // Two waiters in FIFO order: b, then c.
            CompletableFuture<PermitLedger.Holding> fb = sb.acquireAsync().thenApply(l -> ledger.enter("B", l));
            FaultFixtures.awaitChildren("B queued behind the holders", look, dir, permits + 1, WAIT);
            CompletableFuture<PermitLedger.Holding> fc = sc.acquireAsync().thenApply(l -> ledger.enter("C", l));
            FaultFixtures.awaitChildren("C queued behind B", look, dir, permits + 2, WAIT);
            assertFalse(fb.isDone() || fc.isDone(), "a waiter got a permit while all " + permits + " are held");

            ledger.fault("holder JVM killed (SIGKILL)");
            long killedAt = System.nanoTime();
            child.destroyForcibly();
            assertTrue(child.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the child did not die");
            for (PermitLedger.Holding h : childHolds) {
                ledger.leave(h); // a dead process touches nothing; its permit is still taken in ZooKeeper
            }

            // The freed permits go to the first waiters in line, after the child's session ended.
            List<CompletableFuture<PermitLedger.Holding>> waiters = List.of(fb, fc);
            List<PermitLedger.Holding> granted = new ArrayList<>();
            List<Long> tookMillis = new ArrayList<>();
            for (int i = 0; i < childLeases; i++) {
                String who = i == 0 ? "B" : "C";
                PermitLedger.Holding h = await(waiters.get(i), GRANT_WAIT,
                        () -> "waiter " + who + " after the kill; directory " + InvariantChecker.children(look, dir));
                granted.add(h);
                tookMillis.add(TimeUnit.NANOSECONDS.toMillis(h.enteredAt - killedAt));
                assertTrue(h.token > highestBefore, "tokens grow: " + h + " after the child's " + childTokens);
            }
            log.info("REPORT {}: permit(s) back {} ms after SIGKILL (session timeout {} ms)", scenario, tookMillis,
                    CHILD_SESSION.toMillis());
            assertEquals(List.of(), FaultFixtures.nodesOf(look, dir, childSession), "no node of the dead session");
            for (long took : tookMillis) {
                assertTrue(took <= CHILD_SESSION.plus(MARGIN).toMillis(), "a waiter acquired " + took
                        + " ms after the kill; the session timeout is " + CHILD_SESSION.toMillis() + " ms");
                assertTrue(took >= EARLIEST_EXPIRY.toMillis(), "a waiter acquired " + took
                        + " ms after the kill: before the child's session could have expired");
            }
            for (PermitLedger.Holding h : granted) {
                assertTrue(h.lease.isValid(), h + " valid");
            }
            for (PermitLedger.Holding h : ours) {
                assertTrue(h.lease.isValid(), "the kill left " + h + " of this JVM alone");
            }

            if (childLeases < 2) {
                // C is beyond the freed permit: it waits for a holder of this JVM. Once the holder's release has
                // returned, C's grant is due; a grant before it would have been a crowd in the ledger.
                assertEquals(permits + 1, InvariantChecker.children(look, dir).size());
                assertFalse(fc.isDone(), "C got a permit while " + permits + " are held");
                PermitLedger.Holding first = ours.isEmpty() ? granted.remove(0) : ours.remove(0);
                long releasedAt = System.nanoTime();
                ledger.leave(first);
                first.lease.release();
                PermitLedger.Holding hc = await(fc, WAIT, () -> "C after " + first + " released");
                log.info("REPORT {}: C got the permit {} ms after {} released", scenario,
                        TimeUnit.NANOSECONDS.toMillis(hc.enteredAt - releasedAt), first.who);
                granted.add(hc);
            }
            List<PermitLedger.Holding> all = new ArrayList<>(ours);
            all.addAll(granted);
            for (PermitLedger.Holding h : all) {
                ledger.leave(h);
                h.lease.release();
            }
            Await.until(WAIT, () -> InvariantChecker.children(look, dir).isEmpty(),
                    () -> scenario + ": directory " + dir + " still holds " + InvariantChecker.children(look, dir));
            assertEquals(0, ledger.lossesReported(), "no lease of this JVM was lost");
            ledger.assertNoViolations();
        } finally {
            if (child != null) {
                child.destroyForcibly();
            }
            Files.deleteIfExists(childLog);
        }
    }

    /** Starts {@link ChildSemaphoreHolder} in a new JVM on this JVM's class path; its stderr goes to {@code log}. */
    private static Process startChild(String dir, int permits, int leases, Path log) throws IOException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java,
                "-XX:TieredStopAtLevel=1", // starts faster; the child runs a few requests only
                "-cp", System.getProperty("java.class.path"),
                ChildSemaphoreHolder.class.getName(),
                server.connectString(), dir, Integer.toString(permits), Integer.toString(leases),
                Long.toString(CHILD_SESSION.toMillis()));
        pb.redirectError(log.toFile());
        return pb.start();
    }

    /** @return the child's first stdout line, or null if it ended without one */
    private static String firstLine(Process child) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        return out.readLine();
    }

    /** @return the czxids of the children {@code names} of {@code dir} */
    private static Set<Long> czxids(ZooKeeper zk, String dir, List<String> names) throws Exception {
        Set<Long> found = new HashSet<>();
        for (String name : names) {
            Stat stat = zk.exists(dir + "/" + name, false);
            assertTrue(stat != null, dir + "/" + name + " vanished");
            found.add(stat.getCzxid());
        }
        return found;
    }

    /** @return what {@code future} completed with; fails naming {@code what} after {@code within} */
    private static <T> T await(CompletableFuture<T> future, Duration within, Supplier<String> what)
            throws InterruptedException {
        try {
            return future.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("not within " + within.toMillis() + " ms: " + what.get(), e);
        } catch (ExecutionException e) {
            throw new AssertionError(what.get() + " failed: " + e.getCause(), e.getCause());
        }
    }

    // ------------------------------------------------------------------ leader kill

    /**
     * @param cycles acquire / release cycles per client
     * @param kills how many times the leader is killed (and restarted), spread over the run
     */
    private void failover(String scenario, int cycles, int kills) throws Exception {
        String dir = "/faults/sem-failover";
        PermitLedger ledger = new PermitLedger(scenario, PERMITS);
        try (TestingCluster cluster = FaultFixtures.cluster(3, CLUSTER_TICK_MS)) {
            cluster.start();
            List<InstanceSpec> all = new ArrayList<>(cluster.getInstances());
            FaultFixtures.awaitQuorum(cluster, all, CLUSTER_WAIT);
            // Closed in this block, while the ensemble still serves their sessions' closing.
            List<ZkClient> clients = new ArrayList<>();
            ExecutorService workers = Executors.newFixedThreadPool(CLIENTS);
            try {
                long start = System.nanoTime();
                List<Future<?>> work = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    ZkClient client = FaultFixtures.client(cluster.getConnectString(), CLUSTER_SESSION);
                    clients.add(client);
                    FaultFixtures.StateLog states = FaultFixtures.StateLog.of(client);
                    ZkSemaphore semaphore = new ZkSemaphore(client, dir, PERMITS);
                    String name = "client-" + i;
                    work.add(workers.submit(() -> {
                        clientCycles(ledger, name, semaphore, states, start, cycles);
                        return null;
                    }));
                }

                int total = CLIENTS * cycles;
                for (int k = 1; k <= kills; k++) {
                    int progress = total * k / (kills + 2);
                    Await.until(CLUSTER_WAIT,
                            () -> ledger.entries() >= progress || work.stream().allMatch(Future::isDone),
                            () -> "progress to " + progress + ": " + ledger.summary());
                    assertTrue(ledger.entries() < total, "the run ended before the leader kill " + k);
                    InstanceSpec leader = FaultFixtures.leader(cluster).orElseThrow();
                    ledger.fault("leader " + leader.getServerId() + " killed (kill " + k + ")");
                    cluster.killServer(leader);
                    List<InstanceSpec> survivors = new ArrayList<>(all);
                    survivors.remove(leader);
                    InstanceSpec next = FaultFixtures.awaitQuorum(cluster, survivors, CLUSTER_WAIT);
                    log.info("{}: server {} leads now; restarting server {}", scenario, next.getServerId(),
                            leader.getServerId());
                    cluster.restartServer(leader);
                    FaultFixtures.awaitQuorum(cluster, all, CLUSTER_WAIT);
                }

                ledger.assertAllDone(work, CLUSTER_WAIT.multipliedBy(2));
                assertEquals(total, ledger.entries(), "every client completed its cycles");
                ZooKeeper look = clients.get(0).zooKeeper();
                Await.until(CLUSTER_WAIT, () -> InvariantChecker.children(look, dir).isEmpty(),
                        () -> scenario + ": directory " + dir + " still holds " + InvariantChecker.children(look, dir));
                assertEquals(PERMITS, ledger.maxInside(), "two leases were inside together at some point");
                ledger.assertNoViolations();
            } finally {
                workers.shutdownNow();
                for (ZkClient c : clients) {
                    c.close();
                }
            }
        }
    }

    /**
     * One client's thread: {@code cycles} times acquire, enter, stay a moment, leave, release. A {@link
     * CoordinationException} from {@code acquire()} (ZooKeeper not reached within the retry policy) is tolerated,
     * and the cycle retried, only if the client's session was lost meanwhile; any other failure fails the client.
     * Each client's tokens grow from cycle to cycle.
     */
    private static void clientCycles(PermitLedger ledger, String name, ZkSemaphore semaphore,
            FaultFixtures.StateLog states, long start, int cycles) throws InterruptedException {
        long lastToken = -1;
        for (int done = 0; done < cycles; ) {
            ZkLease lease;
            try {
                lease = semaphore.acquire();
            } catch (CoordinationException e) {
                if (states.firstAt(ConnectionState.LOST, start) < 0) {
                    throw e;
                }
                ledger.tolerated(name, e);
                continue;
            }
            PermitLedger.Holding h = ledger.enter(name, lease);
            try {
                assertTrue(h.token > lastToken, name + ": token " + h.token + " after " + lastToken);
                lastToken = h.token;
                LockSupport.parkNanos(HOLD_NANOS);
            } finally {
                ledger.leave(h);
                lease.release();
            }
            done++;
        }
    }
}
