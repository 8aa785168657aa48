package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The zkcoord command's signal handling and loss paths, the jar run as a user runs it. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CliSignalsTest extends CliFixture {

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
                "sh", "-c", "trap 'echo TERM >> log; exit 143' TERM; echo $$ > pid; while true; do sleep 0.05; done");
        long commandPid = awaitNumber("pid");
        signal("-TERM", p.pid());
        p.exitStatus(Duration.ofSeconds(30));
        assertEquals("TERM\n", Files.readString(dir.resolve("log")), "the command got SIGTERM");
        assertFalse(ProcessHandle.of(commandPid).map(ProcessHandle::isAlive).orElse(false), "the command ended");
        QueueSnapshot s = Inspector.inspect(observer, "/review/cli/term");
        assertTrue(s.entries().isEmpty(), "zkcoord exited but its lock node is still there (held until its session "
                + "times out): " + s + "; stderr: " + p.err());
    }

    /**
     * zkcoord gets SIGTERM or SIGINT while it waits in the queue (a 30 s session): its queue node is
     * gone by the time it has exited, not 30 s later when the session would time out, so the
     * waiter behind it is not held up; it exits 128+N and its command never starts.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT"})
    void signalWhileWaitingDeletesTheQueueNode(String signal) throws Exception {
        String path = "/review/cli/waiting-" + signal;
        ZkcoordProcess holder = start("run", connect(), "--lock", path, "--", "sh", "-c",
                "touch holding-" + signal + "; while [ ! -f go-" + signal + " ]; do sleep 0.05; done");
        awaitFile("holding-" + signal);
        ZkcoordProcess waiting = start("run", connect(), "--session-timeout", "30s", "--lock", path, "--",
                "touch", "never-" + signal);
        await("the signalled run queued", () -> queue(path).entries().size() == 2);
        ZkcoordProcess behind = start("run", connect(), "--session-timeout", "30s", "--lock", path, "--",
                "touch", "behind-" + signal);
        await("the run behind queued", () -> queue(path).entries().size() == 3);
        long waitingSession = queue(path).entries().get(1).sessionId();
        assertEquals(waiting.pid(), queue(path).entries().get(1).ownerPid());

        signal("-" + signal, waiting.pid());
        assertEquals(signal.equals("TERM") ? 143 : 130, waiting.exitStatus(Duration.ofSeconds(30)), waiting.toString());
        QueueSnapshot after = queue(path);
        assertTrue(after.entries().stream().noneMatch(e -> e.sessionId() == waitingSession),
                "zkcoord exited but its queue node stays until its 30 s session times out, ahead of the waiter "
                        + "behind it: " + after);
        assertEquals(List.of(holder.pid(), behind.pid()), after.entries().stream().map(e -> e.ownerPid()).toList());

        Files.createFile(dir.resolve("go-" + signal));
        assertEquals(0, holder.exitStatus(), holder.toString());
        assertEquals(0, behind.exitStatus(), behind.toString());
        assertTrue(Files.exists(dir.resolve("behind-" + signal)), "the waiter behind ran");
        assertFalse(Files.exists(dir.resolve("never-" + signal)), "the signalled run's command never started");
    }

    private QueueSnapshot queue(String path) {
        try {
            return Inspector.inspect(observer, path);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The connection is suspended (the only server stops) for longer than --grace, well within the
     * session timeout: the lock counts as lost, the command gets SIGTERM, zkcoord exits 76.
     */
    @Test
    void suspendedLongerThanGraceStopsTheCommand() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--session-timeout", "10s", "--grace", "1s", "--lock",
                "/review/cli/suspended", "--",
                "sh", "-c", "trap 'echo TERM >> log; exit 143' TERM; echo $$ > pid; while true; do sleep 0.05; done");
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
}
