package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.inspect.Inspector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * zkcoord SIGKILLed, the one signal no program can catch: its command's whole process group must
 * die before the session can expire, so that the command never runs beside the next holder's.
 */
class CliWatchdogTest extends CliFixture {

    /** A few runs in the normal build. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void sigkillAtRandomMomentsNeverOverlaps() throws Exception {
        assertNoOverlap(3, "quick");
    }

    /** Twenty runs: the number the watchdog is held to. */
    @Test
    @Tag("soak")
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void sigkillAtRandomMomentsNeverOverlapsTwentyTimes() throws Exception {
        assertNoOverlap(20, "soak");
    }

    /**
     * Each run: A and B run on one lock, both writing ticks to one file every 100 ms (B 15 ticks
     * between {@code B-start} and {@code B-end}); A queues first, with a 2 s session, and is SIGKILLed at
     * a random moment after its node was created: in the first 300 ms (while the watchdog and the
     * command start) or in the first 1.5 s, in turns. No tick of A may fall between B's start and end, and A's command (if it started)
     * must end.
     */
    private void assertNoOverlap(int runs, String name) throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int overlapping = 0;
        List<String> report = new ArrayList<>();
        for (int run = 0; run < runs; run++) {
            String path = "/cli/watchdog/" + name + "-" + run;
            Path ticks = dir.resolve("ticks-" + name + "-" + run);
            Path pidA = dir.resolve("pid-a-" + name + "-" + run);
            // The pid file appears whole or not at all (written aside, then renamed): A may be killed while its
            // shell writes it, and a file that exists must then still name the command.
            ZkcoordProcess a = start("run", connect(), "--session-timeout", "2s", "--lock", path, "--", "sh", "-c",
                    "echo $$ > " + pidA + ".tmp && mv " + pidA + ".tmp " + pidA + "; while true; do echo A >> " + ticks
                            + "; sleep 0.1; done");
            // B queues behind A, so A holds first; the SIGKILL comes at a random moment from A's
            // enqueue on: before, while or after its command starts.
            await("A queued", () -> queued(path, a.pid()));
            ZkcoordProcess b = start("run", connect(), "--lock", path, "--", "sh", "-c",
                    "echo B-start >> " + ticks + "; i=0; while [ $i -lt 15 ]; do echo B >> " + ticks
                            + "; sleep 0.1; i=$((i+1)); done; echo B-end >> " + ticks);
            // Every other run aims at the first 300 ms, when the watchdog and the command start.
            long killAfterMillis = random.nextInt(run % 2 == 0 ? 300 : 1500);
            Thread.sleep(killAfterMillis); // the random moment of the SIGKILL
            boolean commandStarted = Files.exists(pidA);
            a.process().destroyForcibly(); // SIGKILL
            a.process().waitFor();
            try {
                assertEquals(0, b.exitStatus(), b.toString());
                int overlap = ticksOfADuringB(Files.readAllLines(ticks));
                overlapping += overlap;
                report.add("run " + run + ": SIGKILL after " + killAfterMillis + " ms, A's command "
                        + (commandStarted ? "running" : "not yet started") + ", ticks of A during B: " + overlap);
                assertEquals(0, overlap, "A's command ran beside B's: " + String.join("\n  ", report));
                OptionalLong commandPid = commandPid(pidA);
                if (commandPid.isPresent()) {
                    await("A's command ends", () -> !alive(commandPid.getAsLong()));
                }
            } finally {
                killCommand(pidA);
            }
        }
        String summary = name + " (seed " + seed + "), " + runs + " runs, overlapping ticks " + overlapping + ":\n  "
                + String.join("\n  ", report);
        System.out.println(summary);
        assertEquals(0, overlapping, summary);
    }

    /** @return how many {@code A} lines lie between {@code B-start} and {@code B-end} */
    private static int ticksOfADuringB(List<String> lines) {
        int start = lines.indexOf("B-start");
        int end = lines.indexOf("B-end");
        assertTrue(start >= 0 && end > start, "B ran: " + lines);
        return (int) lines.subList(start, end).stream().filter("A"::equals).count();
    }

    private boolean queued(String path, long pid) {
        try {
            return Inspector.inspect(observer, path).entries().stream().anyMatch(e -> e.ownerPid() == pid);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * The command's pid, if it wrote it: from the pid file (whole, since it is renamed into place), or
     * from the file written aside when A was killed before the rename, if its line is whole.
     */
    private static OptionalLong commandPid(Path pidFile) throws IOException {
        if (Files.exists(pidFile)) {
            return OptionalLong.of(Long.parseLong(Files.readString(pidFile).trim()));
        }
        Path aside = pidFile.resolveSibling(pidFile.getFileName() + ".tmp");
        try {
            String line = Files.readString(aside);
            return line.endsWith("\n") ? OptionalLong.of(Long.parseLong(line.trim())) : OptionalLong.empty();
        } catch (java.nio.file.NoSuchFileException e) {
            return OptionalLong.empty();
        }
    }

    /** Clean-up when the watchdog failed: the orphaned command would tick on after the test. */
    private static void killCommand(Path pidFile) throws IOException {
        commandPid(pidFile).ifPresent(pid -> ProcessHandle.of(pid).ifPresent(h -> {
            h.descendants().forEach(ProcessHandle::destroyForcibly);
            h.destroyForcibly();
        }));
    }
}
