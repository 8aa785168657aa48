package io.zkcoord.nemesis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * One ZooKeeper server as a JVM process of its own ({@code QuorumPeerMain} from the test class path), with its
 * own data folder, {@code myid} and {@code zoo.cfg}. The config is written by {@link Ensemble}: this server's own
 * line lists its real quorum and election ports (it binds them), every peer's line lists the ports of the
 * {@link Links} proxies that carry this server's traffic to that peer, so each server has its own view of the
 * network. Restarting keeps the data folder (a crash, then recovery from the log and snapshots).
 *
 * <p>Thread-safe (methods synchronized).
 */
final class ServerProcess {

    static final String HOST = "127.0.0.1";
    private static final String QUORUM_PEER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

    final int id;
    final int clientPort;
    final int quorumPort;
    final int electionPort;
    private final Path dir;
    private Process process;
    private int starts;

    ServerProcess(int id, int clientPort, int quorumPort, int electionPort, Path dir) {
        this.id = id;
        this.clientPort = clientPort;
        this.quorumPort = quorumPort;
        this.electionPort = electionPort;
        this.dir = dir;
    }

    /** Writes {@code zoo.cfg} and {@code myid}; {@code serverLines} are the {@code server.N=...} lines of this view. */
    void writeConfig(int tickMillis, List<String> serverLines) throws IOException {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        Files.writeString(data.resolve("myid"), id + "\n");
        List<String> lines = new ArrayList<>(List.of(
                "tickTime=" + tickMillis,
                "initLimit=25",
                // a follower cut off from the leader stops serving after 4 ticks: well within a third of the
                // clients' session timeout (see NemesisTest.SESSION)
                "syncLimit=4",
                "maxSessionTimeout=60000",
                "dataDir=" + data,
                "clientPort=" + clientPort,
                "clientPortAddress=" + HOST,
                "admin.enableServer=false",
                "4lw.commands.whitelist=*",
                // one disk shared with builds: no fsync (a SIGKILLed JVM's writes are in the page cache anyway)
                "forceSync=no"));
        lines.addAll(serverLines);
        Files.write(config(), lines, StandardCharsets.UTF_8);
    }

    synchronized void start() throws IOException {
        if (isRunning()) {
            return;
        }
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = List.of(java, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.4lw.commands.whitelist=*", "-cp", System.getProperty("java.class.path"),
                QUORUM_PEER_MAIN, config().toString());
        starts++;
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()))
                .start();
    }

    /** SIGKILL: a crash. Waits until the process is gone. */
    synchronized void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** @return {@code leader}, {@code follower}, {@code not serving} or {@code down}, from {@code srvr} */
    String mode() {
        try {
            String reply = FourLetterWordMain.send4LetterWord(HOST, clientPort, "srvr", false, 1000);
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

    String logTail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.log"), StandardCharsets.UTF_8);
            return "--- server " + id + " log, last lines:\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "--- server " + id + ": no log (" + e + ")";
        }
    }

    private Path config() {
        return dir.resolve("zoo.cfg");
    }

    @Override
    public String toString() {
        return "s" + id;
    }
}
