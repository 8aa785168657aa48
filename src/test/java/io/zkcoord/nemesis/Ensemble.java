package io.zkcoord.nemesis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A real ensemble of {@code size} ZooKeeper server processes on 127.0.0.1, every server-to-server link through
 * {@link Links}. Servers can be killed (SIGKILL), paused (SIGSTOP) and restarted on their data. {@link #close()}
 * kills every process and deletes the folder. Thread-safe.
 */
final class Ensemble implements AutoCloseable {

    static final int TICK_MILLIS = 200;

    private final Path dir;
    private final List<ServerProcess> servers;
    private final Links links;

    private Ensemble(Path dir, List<ServerProcess> servers, Links links) {
        this.dir = dir;
        this.servers = servers;
        this.links = links;
    }

    /** Starts {@code size} servers and waits until they all serve, one of them leading. */
    static Ensemble start(int size, Path dir, Duration within) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        // The ports stay reserved while the proxies take theirs, so no proxy gets a server's port.
        List<ServerSocket> reserved = reservePorts(3 * size);
        List<ServerProcess> servers = new ArrayList<>();
        Links links;
        try {
            for (int i = 0; i < size; i++) {
                servers.add(new ServerProcess(i + 1, reserved.get(3 * i).getLocalPort(),
                        reserved.get(3 * i + 1).getLocalPort(), reserved.get(3 * i + 2).getLocalPort(),
                        dir.resolve("server-" + (i + 1))));
            }
            links = new Links(servers);
        } finally {
            for (ServerSocket socket : reserved) {
                socket.close();
            }
        }
        for (ServerProcess s : servers) {
            List<String> view = new ArrayList<>();
            for (ServerProcess peer : servers) {
                view.add(peer == s
                        ? "server." + s.id + "=" + ServerProcess.HOST + ":" + s.quorumPort + ":" + s.electionPort
                        : links.viewLine(s.id, peer.id));
            }
            s.writeConfig(TICK_MILLIS, view);
        }
        Ensemble ensemble = new Ensemble(dir, servers, links);
        try {
            for (ServerProcess s : servers) {
                s.start();
            }
            ensemble.awaitQuorum(within);
        } catch (IOException | InterruptedException | RuntimeException e) {
            ensemble.close();
            throw e;
        }
        return ensemble;
    }

    int size() {
        return servers.size();
    }

    List<ServerProcess> servers() {
        return servers;
    }

    ServerProcess server(int id) {
        return servers.get(id - 1);
    }

    Links links() {
        return links;
    }

    /** @return the id of the server that says it leads, if one does */
    OptionalInt leader() {
        for (ServerProcess s : servers) {
            if (s.isRunning() && "leader".equals(s.mode())) {
                return OptionalInt.of(s.id);
            }
        }
        return OptionalInt.empty();
    }

    /** Waits until every server serves and exactly one leads. */
    void awaitQuorum(Duration within) throws InterruptedException {
        if (!awaitAllServing(within)) {
            throw new IllegalStateException("no quorum within " + within + "; modes "
                    + servers.stream().map(ServerProcess::mode).toList() + "\n"
                    + servers.stream().map(ServerProcess::logTail).collect(Collectors.joining("\n")));
        }
    }

    /** Waits up to {@code within} until every server serves and exactly one leads; @return whether they do */
    boolean awaitAllServing(Duration within) throws InterruptedException {
        // Every 100 ms: each look asks every server with a four-letter command.
        return io.zkcoord.testing.Await.within(within, Duration.ofMillis(100), () -> {
            List<String> modes = servers.stream().map(ServerProcess::mode).toList();
            long leaders = modes.stream().filter("leader"::equals).count();
            long followers = modes.stream().filter("follower"::equals).count();
            return leaders == 1 && leaders + followers == servers.size();
        });
    }

    /**
     * The final heal's wait: every server serves, or, once {@code within} has passed, a quorum serves
     * with one leader and every other server's process has exited (a server that cannot start on
     * its data: a finding about the server, not a reason to skip the run's checks).
     *
     * @return the ids of the servers whose process exited instead of serving (empty normally)
     * @throws IllegalStateException if there is no such quorum by then
     */
    List<Integer> awaitQuorumOrCrashed(Duration within) throws InterruptedException {
        try {
            awaitQuorum(within);
            return List.of();
        } catch (IllegalStateException notAll) {
            List<String> modes = servers.stream().map(ServerProcess::mode).toList();
            long leaders = modes.stream().filter("leader"::equals).count();
            long serving = leaders + modes.stream().filter("follower"::equals).count();
            List<Integer> exited = servers.stream().filter(s -> !s.isRunning()).map(s -> s.id).toList();
            if (leaders == 1 && serving > servers.size() / 2 && serving + exited.size() == servers.size()) {
                return exited;
            }
            throw notAll;
        }
    }

    /** @return the last lines of server {@code id}'s log */
    String logTail(int id) {
        return servers.stream().filter(s -> s.id == id).findFirst().map(ServerProcess::logTail).orElse("");
    }

    /** @return {@code 127.0.0.1:port} of every server's client port */
    List<String> clientAddresses() {
        return servers.stream().map(s -> ServerProcess.HOST + ":" + s.clientPort).toList();
    }

    String describe() {
        return servers.stream().map(s -> "s" + s.id + "=" + (s.isRunning() ? s.mode() : "killed"))
                .collect(Collectors.joining(" "));
    }

    @Override
    public void close() {
        for (ServerProcess s : servers) {
            long pid = s.pid();
            if (pid > 0 && s.isRunning()) {
                Signals.resume(pid); // a paused process would not die from SIGKILL until resumed on some systems
            }
            try {
                s.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        links.close();
        deleteTree(dir);
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temp folder
        }
    }

    /** {@code n} distinct free ports, held open until the caller closes them. */
    private static List<ServerSocket> reservePorts(int n) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            sockets.add(new ServerSocket(0, 1, InetAddress.getByName(ServerProcess.HOST)));
        }
        return sockets;
    }
}
