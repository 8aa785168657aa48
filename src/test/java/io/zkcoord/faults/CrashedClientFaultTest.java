package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 5: a client JVM is killed with SIGKILL while it holds the lock: no unlock, no close, no
 * shutdown hook; only the ensemble's session expiry can free the lock.
 */
class CrashedClientFaultTest {

    private static final int TICK_MS = 200;
    /** The child's session: the server frees its lock this long (plus up to a tick) after its last ping. */
    private static final Duration CHILD_SESSION = Duration.ofSeconds(3);
    /**
     * What the next holder may take beyond the session timeout: the server's expiry tick, the deletion and
     * the watch notification, on a loaded machine, where a
     * scheduling stall or a GC pause of a second or two is ordinary.
     * It only has to tell the expiry hand-off from a wrong answer: a waiter
     * that missed the deletion's watch never moves, and the test gives up on it 30 s after the session timeout.
     */
    private static final Duration MARGIN = Duration.ofSeconds(5);
    private static final Duration SESSION = Duration.ofMillis(20 * TICK_MS);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(TICK_MS, SESSION);

    /** A holder JVM killed with SIGKILL loses its lock to the next waiter within the session timeout plus a small margin. */
    @RepeatedTest(2)
    void killedHolderJvmFreesTheLockWithinTheSessionTimeout() throws Exception {
        killedHolderJvmFreesTheLockWithinTheSessionTimeoutOnce();
    }

    /** Soak: the SIGKILL scenario, many more times. */
    @Tag("soak")
    @RepeatedTest(20)
    void killedHolderJvmFreesTheLockWithinTheSessionTimeoutSoak() throws Exception {
        killedHolderJvmFreesTheLockWithinTheSessionTimeoutOnce();
    }

    private void killedHolderJvmFreesTheLockWithinTheSessionTimeoutOnce() throws Exception {
        String dir = "/faults/crash-" + System.nanoTime();
        InvariantChecker checker = new InvariantChecker("S5 SIGKILL of the holder JVM");
        Path childLog = Files.createTempFile("child-lock-holder", ".log");
        Process child = startChild(dir, childLog);
        try (ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             LockThread reader = new LockThread("s5-child-stdout");
             LockThread waiter = new LockThread("s5-waiter")) {
            String held = reader.await(reader.submit(() -> firstLine(child)), WAIT);
            assertTrue(held != null && held.startsWith("HELD "),
                    "child did not report HELD but " + held + "; its log:\n" + Files.readString(childLog));
            long childToken = Long.parseLong(held.substring("HELD ".length()).trim());
            List<String> nodes = InvariantChecker.children(server.observer(), dir);
            assertEquals(1, nodes.size(), "the child's node: " + nodes);
            Stat childNode = server.observer().exists(dir + "/" + nodes.get(0), false);
            assertEquals(childToken, childNode.getCzxid(), "the child's token is its node's czxid");
            assertNotEquals(b.sessionId(), childNode.getEphemeralOwner());

            ZkMutex mb = checker.tracked(new ZkMutex(b, dir));
            Future<InvariantChecker.Entry> fb =
                    waiter.submit(FaultFixtures.lockAndWrite(checker, "B", mb, "write of the next holder"));
            FaultFixtures.awaitChildren("B queued behind the child", server.observer(), dir, 2, WAIT);

            checker.fault("holder JVM killed (SIGKILL)");
            child.destroyForcibly();
            assertTrue(child.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the child did not die");
            InvariantChecker.Entry eb = waiter.await(fb, CHILD_SESSION.plus(WAIT));
            long tookMillis = checker.faultToNextEntryMillis();
            assertTrue(eb.token() > childToken, "tokens grow from one holder to the next");
            assertTrue(tookMillis <= CHILD_SESSION.plus(MARGIN).toMillis(), "the next holder acquired "
                    + tookMillis + " ms after the kill; the session timeout is " + CHILD_SESSION.toMillis() + " ms");

            waiter.call(FaultFixtures.leaveAndUnlock(checker, eb, mb));
            checker.assertDirectoryEmpty(server.observer(), dir, WAIT);
            checker.assertNoViolations();
        } finally {
            child.destroyForcibly();
            Files.deleteIfExists(childLog);
        }
    }

    /** Starts {@link ChildLockHolder} in a new JVM on this JVM's class path; its stderr goes to {@code log}. */
    private static Process startChild(String dir, Path log) throws IOException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java,
                "-XX:TieredStopAtLevel=1", // starts faster; the child runs a few requests only
                "-cp", System.getProperty("java.class.path"),
                ChildLockHolder.class.getName(),
                server.connectString(), dir, Long.toString(CHILD_SESSION.toMillis()));
        pb.redirectError(log.toFile());
        return pb.start();
    }

    /** @return the child's first stdout line, or null if it ended without one */
    private static String firstLine(Process child) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        return out.readLine();
    }
}
