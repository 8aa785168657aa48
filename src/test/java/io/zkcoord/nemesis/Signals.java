package io.zkcoord.nemesis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/** POSIX signals to child processes ({@code kill -STOP/-CONT/-KILL}): Linux and macOS only. */
final class Signals {

    private Signals() {
    }

    /** Freezes {@code pid} as a long GC pause would: no thread runs, no heartbeat goes out. */
    static void stop(long pid) {
        send("-STOP", pid);
    }

    /** Resumes a process frozen by {@link #stop}. */
    static void resume(long pid) {
        send("-CONT", pid);
    }

    private static void send(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill " + signal + " " + pid + " did not return");
            }
            // a process that already exited is not an error here: a fault may race a crash
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending " + signal, e);
        }
    }
}
