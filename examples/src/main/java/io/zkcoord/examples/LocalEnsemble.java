package io.zkcoord.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * A real ZooKeeper ensemble on 127.0.0.1: every server is a JVM process of its own running {@code
 * org.apache.zookeeper.server.quorum.QuorumPeerMain} from the zookeeper jar on this class path, with
 * its own data folder and {@code myid}, client port, quorum port and election port. No container
 * engine, nothing downloaded at run time.
 *
 * <pre>{@code
 * try (LocalEnsemble ensemble = LocalEnsemble.start(3, System.out::println)) {
 *     String connect = ensemble.connectString();     // 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3
 *     int leader = ensemble.leader().orElseThrow();   // asks each server with `srvr`
 *     ensemble.kill(leader);                          // kill -9 of that server's process
 *     ensemble.restart(leader);                       // same ports, same data; waits until it serves
 * }                                                   // stops every server, deletes the folders
 * }</pre>
 *
 * <p>Every server process is stopped by {@link #close()}, by a shutdown hook (Ctrl-C, {@code kill})
 * and, if this JVM dies without running its hooks ({@code kill -9}), by the server itself, which
 * exits when its parent goes away ({@link ExitWithParent}).
 *
 * <p>As a program it starts an ensemble, prints the connect string and runs until Ctrl-C, reading
 * commands from stdin: {@code status}, {@code leader}, {@code kill N}, {@code stop N}, {@code
 * start N}. Options: {@code --size N} (default 3), {@code --port P} (fixed client ports P, P+1, ...;
 * default: free ports picked at random). It ends with the process that started it ({@code mvn}
 * included), however that ends, and a stop by Ctrl-C or {@code kill} is its normal end: it exits
 * with status 0.
 *
 * <p>Thread-safe.
 */
public final class LocalEnsemble implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    /** Short ticks make elections and syncs quick on loopback. */
    private static final int TICK_MILLIS = 200;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
    private static final String QUORUM_PEER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
    /**
     * A small heap, the serial collector and the C1 compiler only: three server JVMs start faster
     * and stay light on a small machine. Logs go to server.log (see logback-server.xml).
     */
    private static final List<String> SERVER_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dlogback.configurationFile=logback-server.xml");
    private static final String DIR_PREFIX = "zkcoord-ensemble-";
    /** In each ensemble folder: the pid of the JVM that owns it, to clean up after a kill -9. */
    private static final String OWNER_FILE = "owner.pid";

    private final Path baseDir;
    private final List<Server> servers;
    private final Consumer<String> report;
    private final Thread shutdownHook;
    private boolean closed;

    private LocalEnsemble(Path baseDir, List<Server> servers, Consumer<String> report) {
        this.baseDir = baseDir;
        this.servers = servers;
        this.report = report;
        this.shutdownHook = new Thread(this::stopAll, "local-ensemble-shutdown");
    }

    /**
     * Writes the configuration of {@code size} servers into a new temporary folder, starts one
     * process per server and waits until every server serves and one of them leads.
     *
     * @param size the number of servers, at least 1 (3 for a real quorum)
     * @param report told of progress, one line at a time
     * @throws IllegalStateException if the ensemble does not form within a minute; the processes
     *     are stopped and the message quotes the end of their logs
     */
    public static LocalEnsemble start(int size, Consumer<String> report) throws IOException, InterruptedException {
        return start(size, 0, report);
    }

    /**
     * As {@link #start(int, Consumer)}, with fixed client ports, so that the connect string is the
     * same on every start: server N listens on {@code firstClientPort + N - 1}. The quorum and
     * election ports, which clients never see, are still picked free.
     *
     * @param size the number of servers, at least 1 (3 for a real quorum)
     * @param firstClientPort the client port of server 1, or 0 for free ports picked at random
     * @param report told of progress, one line at a time
     * @throws IllegalArgumentException if {@code size} is below 1 or a fixed port is out of range
     * @throws IOException if a fixed client port is in use (the message names it)
     */
    public static LocalEnsemble start(int size, int firstClientPort, Consumer<String> report)
            throws IOException, InterruptedException {
        if (size < 1) {
            throw new IllegalArgumentException("size must be at least 1, was " + size);
        }
        if (firstClientPort != 0 && (firstClientPort < 1024 || firstClientPort + size - 1 > 65535)) {
            throw new IllegalArgumentException("client ports must lie in 1024..65535, were " + firstClientPort + ".."
                    + (firstClientPort + size - 1));
        }
        int[] ports = reservePorts(size, firstClientPort);
        deleteAbandonedFolders();
        Path baseDir = Files.createTempDirectory(DIR_PREFIX);
        Files.writeString(baseDir.resolve(OWNER_FILE), Long.toString(ProcessHandle.current().pid()));
        List<Server> servers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            servers.add(new Server(i + 1, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2],
                    baseDir.resolve("server-" + (i + 1))));
        }
        for (Server s : servers) {
            s.writeConfig(servers);
        }
        LocalEnsemble ensemble = new LocalEnsemble(baseDir, servers, report);
        Runtime.getRuntime().addShutdownHook(ensemble.shutdownHook);
        try {
            for (Server s : servers) {
                ensemble.launch(s);
            }
            report.accept("starting " + size + " ZooKeeper server processes in " + baseDir);
            ensemble.awaitQuorum(START_TIMEOUT);
        } catch (IOException | InterruptedException | RuntimeException e) {
            ensemble.close();
            throw e;
        }
        report.accept("ensemble up: " + ensemble.describe());
        return ensemble;
    }

    /** @return {@code 127.0.0.1:<port>,...} over every server, running or not */
    public String connectString() {
        return servers.stream().map(s -> HOST + ":" + s.clientPort).collect(Collectors.joining(","));
    }

    /** @return the number of servers */
    public int size() {
        return servers.size();
    }

    /** @return the client port of server {@code id} (1-based) */
    public int clientPort(int id) {
        return server(id).clientPort;
    }

    /**
     * Asks every running server with the four-letter {@code srvr}.
     *
     * @return the id of the server that says {@code Mode: leader}, if any does
     */
    public OptionalInt leader() {
        for (Server s : servers) {
            if (s.isRunning() && "leader".equals(mode(HOST, s.clientPort))) {
                return OptionalInt.of(s.id);
            }
        }
        return OptionalInt.empty();
    }

    /**
     * @return what server {@code id} says of itself: {@code leader}, {@code follower}, {@code
     *     standalone}, {@code not serving} (electing or syncing), or {@code down}
     */
    public String mode(int id) {
        Server s = server(id);
        return s.isRunning() ? mode(HOST, s.clientPort) : "down";
    }

    /** @return the process id of server {@code id}, if its process runs */
    public synchronized OptionalLong pid(int id) {
        Server s = server(id);
        return s.isRunning() ? OptionalLong.of(s.process.pid()) : OptionalLong.empty();
    }

    /** Kills server {@code id}'s process at once ({@code kill -9}): a crash. */
    public synchronized void kill(int id) throws InterruptedException {
        Server s = server(id);
        if (s.isRunning()) {
            s.process.destroyForcibly();
            s.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            report.accept("server " + id + " killed (pid " + s.process.pid() + ")");
        }
    }

    /** Stops server {@code id}'s process ({@code kill}, then {@code kill -9} after 10 s). */
    public synchronized void stop(int id) throws InterruptedException {
        Server s = server(id);
        if (s.isRunning()) {
            stopProcess(s.process);
            report.accept("server " + id + " stopped (pid " + s.process.pid() + ")");
        }
    }

    /**
     * Starts server {@code id} again, with its ports and data, stopping it first if it runs, and
     * waits until it serves again (as a follower, or the leader), if it can: a server serves only
     * once a majority of the ensemble runs. If fewer run with it (the first server started after
     * all were stopped), it returns at once, saying how many more to start; the start that makes
     * the majority waits.
     *
     * @throws IllegalStateException if it does not serve within a minute, with a majority running
     */
    public void restart(int id) throws IOException, InterruptedException {
        Server s = server(id);
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("ensemble closed");
            }
            if (s.isRunning()) {
                stopProcess(s.process);
            }
            launch(s);
            int running = (int) servers.stream().filter(Server::isRunning).count();
            int majority = servers.size() / 2 + 1;
            if (running < majority) {
                List<String> down = servers.stream().filter(o -> !o.isRunning()).map(o -> "start " + o.id).toList();
                report.accept("server " + id + " started (pid " + s.process.pid() + "); it serves once " + majority
                        + " of the " + servers.size() + " servers run (" + running + " now): type "
                        + String.join(" or ", down));
                return;
            }
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        String mode;
        while (!isServing(mode = mode(id))) {
            if (!s.isRunning() || System.nanoTime() > deadline) {
                throw new IllegalStateException("server " + id + " did not rejoin (" + mode + "):\n" + s.logTail());
            }
            Thread.sleep(100);
        }
        report.accept("server " + id + " is back as " + mode + " (pid " + s.process.pid() + ")");
    }

    /** @return one line: each server's id, port, pid and mode */
    public String describe() {
        return servers.stream()
                .map(s -> "server " + s.id + " port " + s.clientPort + " "
                        + (s.isRunning() ? "pid " + s.process.pid() + " " : "") + mode(s.id))
                .collect(Collectors.joining(", "));
    }

    /** Stops every server process and deletes the ensemble's folder. Idempotent. */
    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook is running or has run
        }
    }

    // ------------------------------------------------------------------ internals

    private synchronized void stopAll() {
        if (closed) {
            return;
        }
        closed = true;
        for (Server s : servers) {
            if (s.isRunning()) {
                s.process.destroy();
            }
        }
        for (Server s : servers) {
            if (s.process != null) {
                try {
                    stopProcess(s.process);
                } catch (InterruptedException e) {
                    s.process.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
        deleteTree(baseDir);
        report.accept("ensemble stopped, " + baseDir + " deleted");
    }

    private static void stopProcess(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void launch(Server s) throws IOException {
        List<String> command = Jvm.command(SERVER_JVM, QUORUM_PEER_MAIN, List.of(s.config().toString()));
        s.process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(s.log().toFile()))
                .start();
        // stdin stays an open pipe that nobody writes to: see ExitWithParent
    }

    private void awaitQuorum(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> modes = new ArrayList<>();
            for (Server s : servers) {
                if (!s.isRunning()) {
                    throw new IllegalStateException("server " + s.id + " exited with status "
                            + s.process.exitValue() + ":\n" + s.logTail());
                }
                modes.add(mode(s.id));
            }
            boolean allServe = modes.stream().allMatch(LocalEnsemble::isServing);
            long leaders = modes.stream().filter(m -> m.equals("leader") || m.equals("standalone")).count();
            if (allServe && leaders == 1) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no quorum within " + timeout.toSeconds() + " s; modes " + modes
                        + "\n" + servers.stream().map(Server::logTail).collect(Collectors.joining("\n")));
            }
            Thread.sleep(100);
        }
    }

    private static boolean isServing(String mode) {
        return Set.of("leader", "follower", "observer", "standalone").contains(mode);
    }

    /**
     * Asks one server with the four-letter {@code srvr}.
     *
     * @return its {@code Mode:} line's value, {@code not serving} if it answers without one, or
     *     {@code down} if it does not answer
     */
    public static String mode(String host, int port) {
        try {
            String reply = FourLetterWordMain.send4LetterWord(host, port, "srvr", false, 1000);
            for (String line : reply.split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return line.substring("Mode: ".length()).trim();
                }
            }
            return "not serving";
        } catch (IOException | org.apache.zookeeper.common.X509Exception.SSLContextException e) {
            return "down";
        }
    }

    /**
     * Asks every server of a connect string with {@code srvr} (four-letter words must be
     * whitelisted, as LocalEnsemble does).
     *
     * @return {@code host:port} of the server that says it leads, if any
     */
    public static Optional<String> leaderOf(String connectString) {
        String hosts = connectString.contains("/") ? connectString.substring(0, connectString.indexOf('/')) : connectString;
        for (String hostPort : hosts.split(",")) {
            int colon = hostPort.lastIndexOf(':');
            String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
            int port = colon < 0 ? 2181 : Integer.parseInt(hostPort.substring(colon + 1).trim());
            if ("leader".equals(mode(host.trim(), port))) {
                return Optional.of(hostPort.trim());
            }
        }
        return Optional.empty();
    }

    private Server server(int id) {
        if (id < 1 || id > servers.size()) {
            throw new IllegalArgumentException("no server " + id + "; ids are 1.." + servers.size());
        }
        return servers.get(id - 1);
    }

    /**
     * Picks three ports per server (client, quorum, election), all distinct, by opening them all at
     * once, then frees them for the servers. Fixed client ports are opened first, so a port in use
     * is reported before anything starts, and no picked port can be one of them.
     *
     * @return for server i (0-based): client port at {@code 3i}, quorum port at {@code 3i+1},
     *     election port at {@code 3i+2}
     */
    private static int[] reservePorts(int size, int firstClientPort) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[3 * size];
            if (firstClientPort != 0) {
                for (int i = 0; i < size; i++) {
                    int port = firstClientPort + i;
                    try {
                        sockets.add(new ServerSocket(port, 1, InetAddress.getByName(HOST)));
                    } catch (IOException e) {
                        throw new IOException("client port " + port + " on " + HOST + " is in use (" + e.getMessage()
                                + "); choose other ports with --port", e);
                    }
                    ports[3 * i] = port;
                }
            }
            for (int i = 0; i < ports.length; i++) {
                if (ports[i] == 0) {
                    ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST));
                    sockets.add(socket);
                    ports[i] = socket.getLocalPort();
                }
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    /**
     * Deletes the folders of ensembles whose owner died without running its shutdown hook
     * ({@code kill -9}); their servers have exited by themselves (see {@link ExitWithParent}).
     */
    private static void deleteAbandonedFolders() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith(DIR_PREFIX)).toList()) {
                try {
                    long owner = Long.parseLong(Files.readString(dir.resolve(OWNER_FILE)).trim());
                    if (ProcessHandle.of(owner).isEmpty()) {
                        deleteTree(dir);
                    }
                } catch (IOException | NumberFormatException e) {
                    // not ours, or being written right now: leave it
                }
            }
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }

    /** One server: its ports and folder, and its process while it runs. */
    private static final class Server {
        final int id;
        final int clientPort;
        final int quorumPort;
        final int electionPort;
        final Path dir;
        /** Guarded by the ensemble. */
        volatile Process process;

        Server(int id, int clientPort, int quorumPort, int electionPort, Path dir) {
            this.id = id;
            this.clientPort = clientPort;
            this.quorumPort = quorumPort;
            this.electionPort = electionPort;
            this.dir = dir;
        }

        Path config() {
            return dir.resolve("zoo.cfg");
        }

        Path log() {
            return dir.resolve("server.log");
        }

        boolean isRunning() {
            Process p = process;
            return p != null && p.isAlive();
        }

        void writeConfig(List<Server> all) throws IOException {
            Path data = dir.resolve("data");
            Files.createDirectories(data);
            Files.writeString(data.resolve("myid"), id + "\n");
            List<String> lines = new ArrayList<>(List.of(
                    "tickTime=" + TICK_MILLIS,
                    // 5 s to connect and sync with a leader, 4 s of silence before a follower is dropped
                    "initLimit=25",
                    "syncLimit=20",
                    // sessions may last up to 60 s, so the demos' clients get the timeouts they ask for
                    "maxSessionTimeout=60000",
                    "dataDir=" + data,
                    "clientPort=" + clientPort,
                    "clientPortAddress=" + HOST,
                    // the embedded admin web server would take port 8080 on every server
                    "admin.enableServer=false",
                    // srvr tells who leads; mntr shows the server's counters
                    "4lw.commands.whitelist=*",
                    // a throwaway ensemble on one disk shared with builds: skip fsync for speed
                    "forceSync=no"));
            if (all.size() > 1) {
                for (Server s : all) {
                    lines.add("server." + s.id + "=" + HOST + ":" + s.quorumPort + ":" + s.electionPort);
                }
            }
            Files.write(config(), lines, StandardCharsets.UTF_8);
        }

        String logTail() {
            try {
                List<String> lines = Files.readAllLines(log(), StandardCharsets.UTF_8);
                return "--- server " + id + " log (" + log() + "), last lines:\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
            } catch (IOException e) {
                return "--- server " + id + ": no log (" + e + ")";
            }
        }
    }

    // ------------------------------------------------------------------ program

    /**
     * Starts an ensemble, prints its connect string and runs until Ctrl-C (or {@code quit}),
     * reading commands from stdin.
     */
    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, Set.of("--size", "--port"), Set.of(),
                "usage: LocalEnsemble [--size N] [--port P]   (default 3 servers on free ports; with --port, client"
                        + " ports P, P+1, ...; runs until Ctrl-C)");
        int size = Integer.parseInt(options.value("--size").orElse("3"));
        int firstPort = Integer.parseInt(options.value("--port").orElse("0"));
        ExitWithParent.exitWithParentProcess();
        Timeline timeline = Timeline.startingNow();
        AtomicBoolean mainEnded = new AtomicBoolean();
        try (LocalEnsemble ensemble = start(size, firstPort, line -> timeline.say("ensemble", "%s", line))) {
            stopQuietlyOnSignal(ensemble, mainEnded);
            System.out.println();
            System.out.println("connect string: " + ensemble.connectString());
            System.out.println();
            System.out.println("Use it from another terminal, e.g.");
            System.out.println("  mvn -B -q -f examples/pom.xml exec:exec -Ddemo=InventoryDemo -Ddemo.args=\"--connect "
                    + ensemble.connectString() + "\"");
            System.out.println("Commands: status | leader | kill N | stop N | start N | quit.   Ctrl-C (or kill "
                    + ProcessHandle.current().pid() + ") stops everything.");
            console(ensemble, timeline);
        } finally {
            mainEnded.set(true);
        }
    }

    /**
     * Ctrl-C or {@code kill} is how this program is meant to end, so it ends with status 0 once the
     * servers are stopped, not with the 130 or 143 of a signal, which {@code mvn exec:exec} would
     * report as a failed build with a page of stack trace. An end of {@code main} itself (a failure
     * included) keeps its own status.
     */
    private static void stopQuietlyOnSignal(LocalEnsemble ensemble, AtomicBoolean mainEnded) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (!mainEnded.get()) {
                ensemble.close();
                Runtime.getRuntime().halt(0);
            }
        }, "local-ensemble-exit"));
    }

    private static void console(LocalEnsemble ensemble, Timeline timeline) throws InterruptedException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (true) {
            String line;
            try {
                line = in.readLine();
            } catch (IOException e) {
                line = null;
            }
            if (line == null) {
                // no console (stdin closed): run until Ctrl-C
                Thread.sleep(Long.MAX_VALUE);
                return;
            }
            String[] words = line.trim().split("\\s+");
            try {
                switch (words[0]) {
                    case "" -> { }
                    case "status" -> timeline.say("ensemble", "%s", ensemble.describe());
                    case "leader" -> timeline.say("ensemble", "leader: %s",
                            ensemble.leader().isPresent() ? "server " + ensemble.leader().getAsInt() : "none");
                    case "kill" -> ensemble.kill(Integer.parseInt(words[1]));
                    case "stop" -> ensemble.stop(Integer.parseInt(words[1]));
                    case "start" -> ensemble.restart(Integer.parseInt(words[1]));
                    case "quit", "exit" -> {
                        return;
                    }
                    default -> timeline.say("ensemble", "commands: status | leader | kill N | stop N | start N | quit");
                }
            } catch (IOException | RuntimeException e) {
                timeline.say("ensemble", "%s failed: %s", line.trim(), e.getMessage());
            }
        }
    }
}
