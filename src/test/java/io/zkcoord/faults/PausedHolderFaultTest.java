package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock holder frozen by SIGSTOP (as a long GC pause freezes a JVM) while it holds a {@link ZkMutex}: its
 * session expires on the server, another client takes the lock and writes the guarded data node, then the
 * frozen holder is resumed with a write already waiting on its stdin, which it performs at once, before its
 * ZooKeeper client has learned that its session is gone. The classic case fencing exists for.
 *
 * <p>The holder is {@link ChildPausedWriter}, one child JVM per test serving every round; each round it takes
 * the mutex on a fresh lock client (short session, {@link #CHILD_LOCK_SESSION}). Its data client (long session,
 * {@link #CHILD_DATA_SESSION}) outlives the pause. One round:
 *
 * <ol>
 *   <li>the child holds (its node, owned by its lock session, is the only one in the lock directory); the
 *       test's holder queues behind it ({@code acquireAsync});
 *   <li>SIGSTOP, and the test waits until the kernel reports the child stopped;
 *   <li>the test's holder is granted the lock once the server expired the child's session (the child's node
 *       is gone with its session), and writes the data node with {@code commitIfHeld};
 *   <li>the write command goes into the frozen child's stdin, then SIGCONT; the child's answer is read and
 *       the data node looked at with a separate observer client.
 * </ol>
 * <b>Guarded</b> rounds write with {@code mutex.commitIfHeld} on the lock's own session: the write must never
 * land, and the data node keeps the new holder's value, every time. The child's answer must be {@code
 * REFUSED} with {@link io.zkcoord.LockLostException} or {@link io.zkcoord.CommitOutcomeUnknownException}. The
 * latter is what ZooKeeper 3.9.4 gives here (every time, about 100 ms after SIGCONT): the resumed client has
 * not heard from the server for longer than its read timeout, so it drops the connection under the request
 * (CONNECTIONLOSS), and the library rightly cannot tell whether it was applied. It was not: a guarded write
 * can land only while the child's node exists, and the next holder was granted only once it was gone.
 *
 * <p><b>Plain</b> rounds write with an unguarded {@code setData} through the data client: the write must land,
 * overwriting the new holder's value: the hazard the guard exists for (this assertion lets the scenario fail:
 * a "plain" write that never landed would show nothing). In every round the child must still believe it holds
 * the lock when it writes, otherwise the round did not test a paused holder.
 *
 * <p>The counts are logged as {@code MEASURED} lines. The soak run (tag {@code soak}) does 100 guarded and 20
 * plain rounds.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // a safety net only: every wait below has its own deadline
class PausedHolderFaultTest {

    private static final Logger log = LoggerFactory.getLogger(PausedHolderFaultTest.class);

    /** The server checks expiry every tick: the child's session ends at most a tick after its timeout. */
    private static final int TICK_MS = 100;
    /**
     * The server's upper bound for session timeouts, above its default of 20 ticks, so that the child's data
     * client can keep a session far longer than the pause.
     */
    private static final int MAX_SESSION_MS = 30_000;
    /** The child's lock session: the pause outlasts it. */
    private static final Duration CHILD_LOCK_SESSION = Duration.ofSeconds(1);
    /**
     * The child's data session: the pause (about {@link #CHILD_LOCK_SESSION}) fits well within it, and within
     * its client's read timeout (two thirds of it) even after an idle third.
     */
    private static final Duration CHILD_DATA_SESSION = Duration.ofSeconds(20);
    /** The test's own clients: never paused. */
    private static final Duration SESSION = Duration.ofSeconds(4);
    /**
     * How long the next holder may wait for the grant after SIGSTOP before the round fails: the lock session
     * plus a tick would do on an idle machine; this is a deadline, not a measure (the times are logged).
     */
    private static final Duration GRANT_WAIT = CHILD_LOCK_SESSION.plus(Duration.ofSeconds(9));
    /** Every other wait: the child's answers (a refused write may wait for the client's reconnection). */
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final String GUARDED = "guarded";
    private static final String PLAIN = "plain";

    private static TestingServer server;
    private static ZkClient observerClient;
    private static ZkClient holderClient;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MS, -1,
                Map.of("maxSessionTimeout", Integer.toString(MAX_SESSION_MS))), true);
        observerClient = FaultFixtures.client(server.getConnectString(), SESSION);
        holderClient = FaultFixtures.client(server.getConnectString(), SESSION);
    }

    @AfterAll
    static void stopServer() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {holderClient, observerClient, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    /**
     * 5 rounds: a holder paused past its session timeout, resumed with a write guarded by {@code
     * commitIfHeld}, never overwrites the new holder's value; the write is refused every time (the
     * soak runs 100).
     */
    @Test
    void guardedWriteOfAPausedHolderNeverLands() throws Exception {
        run("paused holder, 5 rounds", Collections.nCopies(5, GUARDED));
    }

    /**
     * 3 rounds: the same paused holder writing through its long-session data client, unguarded, overwrites
     * the new holder's value every time: the lock alone does not protect the data.
     */
    @Test
    void plainWriteOfAPausedHolderLands() throws Exception {
        run("paused holder, 3 rounds", Collections.nCopies(3, PLAIN));
    }

    /** Soak: 100 guarded rounds, then 20 plain ones, on one child JVM. */
    @Tag("soak")
    @Test
    void pausedHolderSoak() throws Exception {
        run("paused holder soak",
                Stream.concat(Collections.nCopies(100, GUARDED).stream(), Collections.nCopies(20, PLAIN).stream())
                        .toList());
    }

    // ------------------------------------------------------------------ the scenario

    private void run(String scenario, List<String> plan) throws Exception {
        String base = "/faults/paused-" + System.nanoTime();
        String lockDir = base + "/lock";
        String dataPath = base + "/data";
        ZooKeeper look = observerClient.zooKeeper();
        FaultFixtures.createPath(look, base);
        look.create(dataPath, bytes("initial"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<Round> rounds = new ArrayList<>();
        long start = System.nanoTime();
        try (Child child = Child.start(lockDir, dataPath)) {
            for (int i = 1; i <= plan.size(); i++) {
                rounds.add(round(child, i, plan.get(i - 1), lockDir, dataPath));
            }
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        List<String> violations = new ArrayList<>();
        for (String variant : List.of(GUARDED, PLAIN)) {
            List<Round> of = rounds.stream().filter(r -> r.variant.equals(variant)).toList();
            if (!of.isEmpty()) {
                log.info("MEASURED {}: {}", scenario, summary(variant, of));
            }
        }
        log.info("MEASURED {}: {} rounds in {} ms (child JVM start included)", scenario, rounds.size(), tookMillis);
        for (Round r : rounds) {
            violations.addAll(r.violations());
        }
        try {
            Await.until("the lock directory empty once the child is gone", WAIT,
                    () -> InvariantChecker.children(look, lockDir).isEmpty());
        } catch (AssertionError e) {
            violations.add(e.getMessage() + ": " + InvariantChecker.children(look, lockDir));
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(scenario + ": " + violations.size() + " violation(s) in " + rounds.size()
                    + " rounds:\n  " + String.join("\n  ", violations));
        }
    }

    /** One round; see the class comment. Fails at once if the protocol breaks; the invariants are judged later. */
    private Round round(Child child, int n, String variant, String lockDir, String dataPath) throws Exception {
        ZooKeeper look = observerClient.zooKeeper();
        child.send("LOCK");
        String[] held = child.expect("HELD", WAIT);
        assertEquals(5, held.length, "child's report: " + String.join(" ", held));
        long childToken = Long.parseLong(held[1]);
        long childSession = Long.parseLong(held[2]);
        assertEquals(CHILD_LOCK_SESSION.toMillis(), Long.parseLong(held[3]), "negotiated lock session timeout");
        assertEquals(CHILD_DATA_SESSION.toMillis(), Long.parseLong(held[4]),
                "negotiated data session timeout (the server's maxSessionTimeout must allow it)");
        List<String> owned = FaultFixtures.nodesOf(look, lockDir, childSession);
        assertEquals(1, owned.size(), "round " + n + ": the child's node: " + owned);
        assertEquals(List.of(owned.get(0)), InvariantChecker.children(look, lockDir), "only the child's node");
        assertEquals(childToken, look.exists(lockDir + "/" + owned.get(0), false).getCzxid(),
                "the child's token is its node's czxid");
        int versionBefore = look.exists(dataPath, false).getVersion();

        ZkMutex mutex = new ZkMutex(holderClient, lockDir);
        CompletableFuture<ZkLease> next = mutex.acquireAsync();
        ZkLease lease = null;
        try {
            FaultFixtures.awaitChildren("round " + n + ": the next holder queued behind the child", look, lockDir, 2,
                    WAIT);
            assertFalse(next.isDone(), "round " + n + ": granted while the child holds");

            long stoppedAt = child.stop();
            try {
                lease = next.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("round " + n + ": the next holder not granted within " + GRANT_WAIT.toMillis()
                        + " ms of SIGSTOP; directory " + InvariantChecker.children(look, lockDir), e);
            } catch (ExecutionException e) {
                throw new AssertionError("round " + n + ": the next holder's acquisition failed", e.getCause());
            }
            long grantedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
            assertEquals(List.of(), FaultFixtures.nodesOf(look, lockDir, childSession),
                    "round " + n + ": the child's node is gone with its session");
            assertTrue(lease.fencingToken() > childToken, "tokens grow from the child to the next holder");
            String holderValue = "holder-" + n + "-" + lease.fencingToken();
            lease.commitIfHeld(List.of(Op.setData(dataPath, bytes(holderValue), -1)));

            String childValue = "child-" + n + "-" + childToken;
            child.send("WRITE " + variant + " " + childValue); // waits in the pipe: the child is frozen
            assertTrue(child.isStopped(), "round " + n + ": the child must still be frozen");
            long pausedMillis = TimeUnit.NANOSECONDS.toMillis(child.resume() - stoppedAt);
            String[] answer = child.next(WAIT);

            Stat stat = new Stat();
            String data = new String(look.getData(dataPath, false, stat), StandardCharsets.UTF_8);
            return new Round(n, variant, answer, holderValue, childValue, data, stat.getVersion() - versionBefore,
                    grantedAfter, pausedMillis);
        } finally {
            next.cancel(false); // abandons the acquisition if it was not granted
            if (lease != null) {
                lease.release();
            }
        }
    }

    // ------------------------------------------------------------------ results

    /** What one round saw. */
    private record Round(int n, String variant, String[] answer, String holderValue, String childValue, String data,
            int versionDelta, long grantedAfterStopMillis, long pausedMillis) {

        String outcome() {
            return answer[0];
        }

        /** The exception class (and its cause's code) a refused write reported, or the outcome. */
        String refusal() {
            return outcome().equals("REFUSED") && answer.length > 2 ? answer[1] + " " + answer[2] : outcome();
        }

        String field(String key) {
            for (String w : answer) {
                if (w.startsWith(key + "=")) {
                    return w.substring(key.length() + 1);
                }
            }
            return "?";
        }

        boolean believedHeld() {
            return field("held").equals("true");
        }

        boolean refused() {
            return outcome().equals("REFUSED") && (answer[1].equals("io.zkcoord.LockLostException")
                    || answer[1].equals("io.zkcoord.CommitOutcomeUnknownException"));
        }

        boolean landed() {
            return outcome().equals("APPLIED") && data.equals(childValue) && versionDelta == 2;
        }

        boolean dataKept() {
            return data.equals(holderValue) && versionDelta == 1;
        }

        List<String> violations() {
            List<String> found = new ArrayList<>();
            String where = "round " + n + " (" + variant + "): ";
            if (!believedHeld()) {
                found.add(where + "the child already knew it had lost the lock when it wrote, the round tested no"
                        + " paused holder: " + String.join(" ", answer));
            }
            if (variant.equals(GUARDED)) {
                if (!refused()) {
                    found.add(where + "the guarded write was not refused: " + String.join(" ", answer));
                }
                if (!dataKept()) {
                    found.add(where + "the data node holds " + data + " (version +" + versionDelta + "), not the new "
                            + "holder's " + holderValue + " (version +1)");
                }
            } else if (!landed()) {
                found.add(where + "the plain write did not land: answer " + String.join(" ", answer) + ", data " + data
                        + " (version +" + versionDelta + "), expected the child's " + childValue + " (version +2)");
            }
            return found;
        }
    }

    private static String summary(String variant, List<Round> rounds) {
        int total = rounds.size();
        Map<String, Long> answers = rounds.stream().collect(Collectors.groupingBy(Round::refusal, TreeMap::new,
                Collectors.counting()));
        String head = variant.equals(GUARDED)
                ? "guarded: " + rounds.stream().filter(Round::refused).count() + "/" + total + " refused, data kept "
                        + "the new holder's value " + rounds.stream().filter(Round::dataKept).count() + "/" + total
                : "plain: " + rounds.stream().filter(Round::landed).count() + "/" + total + " landed (overwrote the new"
                        + " holder's value)";
        return head + "; answers " + answers
                + "; child believed it held the lock when writing " + rounds.stream().filter(Round::believedHeld).count()
                + "/" + total
                + "; lock client's ZooKeeper handle / zkcoord state when writing " + count(rounds, "zk") + " / "
                + count(rounds, "client")
                + "; next holder granted after SIGSTOP ms " + spread(rounds.stream().map(Round::grantedAfterStopMillis))
                + "; paused ms " + spread(rounds.stream().map(Round::pausedMillis))
                + "; write answered after resume ms " + spread(rounds.stream().map(r -> parse(r.field("took"))))
                + " (lock session " + CHILD_LOCK_SESSION.toMillis() + " ms, tick " + TICK_MS + " ms)";
    }

    private static Map<String, Long> count(List<Round> rounds, String field) {
        return rounds.stream().collect(Collectors.groupingBy(r -> r.field(field), TreeMap::new, Collectors.counting()));
    }

    private static long parse(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** @return min/median/max */
    private static String spread(Stream<Long> values) {
        List<Long> sorted = values.sorted().toList();
        return sorted.get(0) + "/" + sorted.get(sorted.size() / 2) + "/" + sorted.get(sorted.size() - 1);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ the child JVM

    /** The {@link ChildPausedWriter} process: commands on its stdin, answers from its stdout, signals by pid. */
    private static final class Child implements AutoCloseable {
        private final Process process;
        private final Path log;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private boolean stopped;

        private Child(Process process, Path log) {
            this.process = process;
            this.log = log;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(this::readLines, "paused-writer-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        /** Starts the child on this JVM's class path; its stderr goes to a temporary log, shown on failure. */
        static Child start(String lockDir, String dataPath) throws IOException {
            Path log = Files.createTempFile("child-paused-writer", ".log");
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(java,
                    "-XX:TieredStopAtLevel=1", // starts faster; the child runs a few requests per round
                    "-cp", System.getProperty("java.class.path"),
                    ChildPausedWriter.class.getName(),
                    server.getConnectString(), lockDir, dataPath,
                    Long.toString(CHILD_LOCK_SESSION.toMillis()), Long.toString(CHILD_DATA_SESSION.toMillis()));
            pb.redirectError(log.toFile());
            return new Child(pb.start(), log);
        }

        private void readLines() {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the child is gone; next() reports it
            }
        }

        void send(String command) throws IOException {
            stdin.write(command + "\n");
            stdin.flush();
        }

        /** @return the child's next answer, split in words; fails after {@code within} */
        String[] next(Duration within) throws InterruptedException {
            String line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null) {
                throw new AssertionError("no answer from the child within " + within.toMillis() + " ms (alive: "
                        + process.isAlive() + "); its log:\n" + logTail());
            }
            return line.trim().split(" ");
        }

        /** @return the next answer, which must start with {@code word} */
        String[] expect(String word, Duration within) throws InterruptedException {
            String[] answer = next(within);
            if (!answer[0].equals(word)) {
                throw new AssertionError("the child answered " + String.join(" ", answer) + " instead of " + word
                        + "; its log:\n" + logTail());
            }
            return answer;
        }

        /** SIGSTOP; waits until the kernel reports the process stopped. @return when the signal was sent */
        long stop() throws Exception {
            long at = System.nanoTime();
            signal("-STOP");
            stopped = true;
            Await.until("the child stopped by SIGSTOP", WAIT, this::isStopped);
            return at;
        }

        /** SIGCONT. @return when it was sent */
        long resume() throws Exception {
            long at = System.nanoTime();
            signal("-CONT");
            stopped = false;
            return at;
        }

        /** @return true if {@code /proc/<pid>/stat} reports the process stopped ({@code T}) */
        boolean isStopped() {
            try {
                String stat = Files.readString(Paths.get("/proc", Long.toString(process.pid()), "stat"));
                return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
            } catch (IOException e) {
                return false;
            }
        }

        private void signal(String signal) throws Exception {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start();
            assertTrue(kill.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS), "kill " + signal + " did not finish");
            assertEquals(0, kill.exitValue(), "kill " + signal + " " + process.pid());
        }

        private String logTail() {
            try {
                List<String> all = Files.readAllLines(log);
                return all.subList(Math.max(0, all.size() - 60), all.size()).stream()
                        .collect(Collectors.joining("\n"));
            } catch (IOException e) {
                return "(cannot read " + log + ": " + e + ")";
            }
        }

        /** Resumes the child if a failed round left it frozen, asks it to exit, and kills it if it does not. */
        @Override
        public void close() throws Exception {
            try {
                if (stopped && process.isAlive()) {
                    signal("-CONT");
                }
                if (process.isAlive()) {
                    try {
                        send("EXIT");
                        stdin.close();
                    } catch (IOException e) {
                        // gone already
                    }
                    if (!process.waitFor(5, TimeUnit.SECONDS)) {
                        process.destroyForcibly();
                        process.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    }
                }
            } finally {
                process.destroyForcibly();
                Files.deleteIfExists(log);
            }
        }
    }
}
