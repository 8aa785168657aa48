package io.zkcoord.nemesis;

import io.zkcoord.testing.ZkProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One client slot of a run: a {@link NemesisClient} child JVM (restarted as a new incarnation after a SIGKILL)
 * and its own proxy in front of every server, so the slot can be cut off from the ensemble alone. Thread-safe.
 */
final class ClientProcess implements AutoCloseable {

    final int slot;
    private final List<ZkProxy> proxies = new ArrayList<>();
    private final Path dir;
    private final List<String> args;
    private final List<Path> histories = new ArrayList<>();
    private int incarnation;
    private int stalls;
    private Process process;
    private String name;

    /**
     * @param args what follows the connect string and history file: session ms, base path, seed, workloads
     */
    ClientProcess(int slot, List<String> serverAddresses, Path dir, List<String> args) {
        this.slot = slot;
        this.dir = dir;
        this.args = args;
        for (String address : serverAddresses) {
            proxies.add(ZkProxy.to(address));
        }
    }

    /** Starts the next incarnation; records its launch in {@code nemesis} first. */
    synchronized String start(History.Writer nemesis) throws IOException {
        name = "c" + slot + "." + incarnation++;
        Path history = dir.resolve(name + ".history");
        histories.add(history);
        String connect = proxies.stream().map(ZkProxy::connectString).collect(Collectors.joining(","));
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), NemesisClient.class.getName(), name, connect,
                history.toString()));
        command.addAll(args);
        nemesis.record("", "launch", "client", name, 0, 0, "");
        process = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve(name + ".log").toFile()))
                .start();
        return name;
    }

    synchronized String name() {
        return name;
    }

    synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** SIGKILL: the process dies at once, its sessions live on until they expire. */
    synchronized void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            Signals.resume(process.pid());
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Asks the process to finish; @return whether it exited within {@code within} */
    boolean stop(Duration within) throws InterruptedException {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null || !p.isAlive()) {
            return true;
        }
        try {
            OutputStream in = p.getOutputStream();
            in.write("STOP\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            // exited meanwhile
        }
        return p.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Silences every connection of this slot to the ensemble until a matching {@link #heal()}. */
    synchronized void stall() {
        if (stalls++ == 0) {
            proxies.forEach(ZkProxy::stall);
        }
    }

    synchronized void heal() {
        if (stalls > 0 && --stalls == 0) {
            proxies.forEach(ZkProxy::heal);
        }
    }

    synchronized void healAll() {
        stalls = 0;
        proxies.forEach(ZkProxy::heal);
    }

    /** Closes every current connection (the client reconnects at once). */
    void cutConnections() {
        proxies.forEach(ZkProxy::cutAll);
    }

    synchronized List<Path> histories() {
        return List.copyOf(histories);
    }

    @Override
    public void close() {
        try {
            kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        proxies.forEach(ZkProxy::close);
    }
}
