package io.zkcoord.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Kills the command's whole process group when zkcoord dies, by any means, SIGKILL included: no
 * JVM code runs then, so the killing is done by a small shell process outside the JVM.
 *
 * <p><b>How.</b> The command runs in a session and process group of its own ({@code setsid}), so
 * its group id is its pid and holds every process it starts (unless one leaves the group on
 * purpose). The watchdog, also in a session of its own so that a signal to zkcoord's group does not
 * reach it, reads a pipe whose only writer is zkcoord. When zkcoord dies the kernel closes that
 * pipe, the watchdog reads end-of-file and sends SIGKILL to the command's group: within
 * milliseconds, long before the session (at least two server ticks) can expire and the lock be
 * granted again.
 *
 * <p><b>The hand-over of the group id,</b> without a window in which zkcoord's death would go
 * unnoticed. The watchdog starts first. The command is started through a guard that (1) writes its
 * pid to a file {@code pgid} in a private folder, then (2) runs the command only if no file {@code
 * dead} is there. The watchdog, on end-of-file, (a) creates {@code dead}, then (b) kills the group
 * named in {@code pgid} if there is one. If (2) found no {@code dead}, (2) came before (a), so (1)
 * came before (b): the watchdog sees the group and kills it. If (2) found {@code dead}, the command
 * never starts. If zkcoord dies before starting the command, nothing is left to kill. The folder is
 * removed after a kill (the guard died with its group) or a {@code release}, never when no group
 * was recorded: a guard started just before zkcoord died may still be about to look for {@code
 * dead} there, and must find it; that guard removes the folder when it finds {@code dead}.
 *
 * <p><b>Orders</b> on the pipe, one per line: {@code kill} sends SIGKILL to the group now (the
 * command's leftovers when the lock is lost); {@code release} ends the watchdog without killing
 * (the command ended and zkcoord exits normally; processes it left in the background run on, as
 * they always did). Thread-safe.
 */
final class Watchdog implements AutoCloseable {

    /** The watchdog: reads orders until end-of-file, then kills the group (see the class comment). */
    private static final String WATCH = String.join("\n",
            "trap '' INT TERM HUP QUIT",
            "dir=$1",
            "killgroup() { [ -s \"$dir/pgid\" ] && { kill -KILL \"-$(cat \"$dir/pgid\")\" 2>/dev/null; true; }; }",
            "while IFS= read -r order; do",
            "  case $order in",
            "    kill) killgroup ;;",
            "    release) rm -rf \"$dir\"; exit 0 ;;",
            "  esac",
            "done",
            ": > \"$dir/dead\"",
            // The folder goes only with the group: without a group, a guard may still be about to
            // look for "dead" there.
            "killgroup && rm -rf \"$dir\"");

    /** The guard: records its group, runs the command unless the watchdog already saw zkcoord die. */
    private static final String GUARD = String.join("\n",
            "dir=$1; shift",
            "echo $$ > \"$dir/pgid.new\" && mv \"$dir/pgid.new\" \"$dir/pgid\" || exit 126",
            "[ -e \"$dir/dead\" ] && { rm -rf \"$dir\"; exit 137; }",
            "exec \"$@\"");

    private final Path dir;
    private final Process process;
    private final OutputStream orders;

    private Watchdog(Path dir, Process process) {
        this.dir = dir;
        this.process = process;
        this.orders = process.getOutputStream();
    }

    /**
     * Starts the watchdog process.
     *
     * @throws IOException if the private folder cannot be made or {@code setsid} or {@code /bin/sh}
     *     cannot be started
     */
    static Watchdog start() throws IOException {
        Path dir = Files.createTempDirectory("zkcoord-run-");
        ProcessBuilder pb = new ProcessBuilder("setsid", "/bin/sh", "-c", WATCH, "zkcoord-watchdog", dir.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        try {
            return new Watchdog(dir, pb.start());
        } catch (IOException e) {
            Files.deleteIfExists(dir);
            throw e;
        }
    }

    /**
     * @return the command line that runs {@code command} in a process group of its own, watched by
     *     this watchdog; the process started from it has the command's pid and exit status (126 if
     *     the guard cannot record the group, 137 if zkcoord died before the command started)
     */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(command.size() + 6);
        wrapped.addAll(List.of("setsid", "/bin/sh", "-c", GUARD, "zkcoord-run", dir.toString()));
        wrapped.addAll(command);
        return wrapped;
    }

    /** SIGKILL to the command's whole group now, leftovers included; the watchdog keeps watching. */
    void killGroup() {
        send("kill");
    }

    /**
     * Ends the watchdog without killing anything (the command has ended): call before zkcoord
     * exits normally. Waits briefly for the watchdog to go.
     */
    @Override
    public void close() {
        send("release");
        try {
            orders.close();
        } catch (IOException gone) {
            // the watchdog has already ended
        }
        try {
            process.waitFor(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void send(String order) {
        try {
            orders.write((order + "\n").getBytes(StandardCharsets.US_ASCII));
            orders.flush();
        } catch (IOException gone) {
            // the watchdog has ended (killed by someone): nothing more it can do
        }
    }
}
