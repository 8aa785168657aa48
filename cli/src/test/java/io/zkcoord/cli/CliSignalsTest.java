package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The zkcoord command's signal handling and loss paths, the jar run as a user runs it. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CliSignalsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestingServer server;
    private ZkClient observer;
    private final List<ZkcoordProcess> started = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    void startServer() throws Exception {
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, 0), true);
        observer = ZkClient.builder().connectString(server.getConnectString()).build();
    }

    @AfterEach
    void killLeftovers() {
        started.forEach(ZkcoordProcess::kill);
        started.clear();
    }

    @AfterAll
    void stopServer() throws Exception {
        observer.close();
        server.close();
    }

    private ZkcoordProcess start(String... args) {
        ZkcoordProcess p = ZkcoordProcess.start(dir, args);
        started.add(p);
        return p;
    }

    private String connect() {
        return "--connect=" + server.getConnectString();
    }

    /** A command ended by a signal: zkcoord exits 128+N, as documented (and as a shell reports it). */
    @Test
    void commandKilledBySignalExits128PlusN() {
        ZkcoordProcess p = start("run", connect(), "--lock", "/review/cli/signal", "--", "sh", "-c", "kill -KILL $$");
        assertEquals(137, p.exitStatus(), p.toString());
    }

    /**
     * zkcoord itself gets SIGTERM (a service manager stops it): the command gets SIGTERM and ends,
     * and the lock is released before zkcoord exits, not left to the session timeout (10 s here,
     * during which nobody else can run).
     */
    @Test
    void sigtermToZkcoordReleasesTheLockBeforeExiting() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--session-timeout", "10s", "--lock", "/review/cli/term", "--",
                "sh", "-c", "echo $$ > pid; trap 'echo TERM >> log; exit 143' TERM; while true; do sleep 0.05; done");
        awaitFile("pid");
        long commandPid = Long.parseLong(Files.readString(dir.resolve("pid")).trim());
        signal("-TERM", p.pid());
        p.exitStatus(Duration.ofSeconds(30));
        assertEquals("TERM\n", Files.readString(dir.resolve("log")), "the command got SIGTERM");
        assertFalse(ProcessHandle.of(commandPid).map(ProcessHandle::isAlive).orElse(false), "the command ended");
        QueueSnapshot s = Inspector.inspect(observer, "/review/cli/term");
        assertTrue(s.entries().isEmpty(), "zkcoord exited but its lock node is still there (held until its session "
                + "times out): " + s + "; stderr: " + p.err());
    }

    /**
     * The connection is suspended (the only server stops) for longer than --grace, well within the
     * session timeout: the lock counts as lost, the command gets SIGTERM, zkcoord exits 76.
     */
    @Test
    void suspendedLongerThanGraceStopsTheCommand() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--session-timeout", "10s", "--grace", "1s", "--lock",
                "/review/cli/suspended", "--",
                "sh", "-c", "echo $$ > pid; trap 'echo TERM >> log; exit 143' TERM; while true; do sleep 0.05; done");
        awaitFile("pid");
        server.stop();
        try {
            assertEquals(76, p.exitStatus(Duration.ofSeconds(30)), p.toString());
        } finally {
            server.restart();
        }
        assertEquals("TERM\n", Files.readString(dir.resolve("log")), "the command got SIGTERM");
        assertTrue(p.err().contains("suspended for longer than the grace"), p.err());
    }

    private void awaitFile(String name) {
        await(name + " written", () -> Files.exists(dir.resolve(name)));
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + WAIT.toSeconds() + " s: " + what);
            }
            try {
                Thread.sleep(20); // polling a condition with a deadline, as CliTest does
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill " + signal + " " + pid);
    }
}
