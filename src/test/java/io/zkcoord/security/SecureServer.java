package io.zkcoord.security;

import io.zkcoord.testing.FourLetterWords;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * One standalone ZooKeeper server as a JVM process of its own, with a plain-text client port and,
 * when given TLS settings, a {@code secureClientPort} served by Netty. A process of its own because
 * ZooKeeper's server turns its {@code ssl.*} (and other unknown) settings into JVM-wide system
 * properties ({@code zookeeper.ssl.*}), which ZooKeeper's client also reads: in the test's JVM they
 * would leak into the clients under test.
 *
 * <p>A member of an ensemble ({@link SecureEnsemble}) has an id ({@code myid}) and ports chosen by
 * the ensemble, whose settings name every member ({@code server.N} lines).
 *
 * <p>Thread-safe (methods synchronized).
 */
final class SecureServer implements AutoCloseable {

    static final String HOST = "127.0.0.1";
    private static final Pattern SESSION_ID = Pattern.compile("sid=0x([0-9a-f]+)");
    /**
     * How long a server's JVM may take to start and join its quorum. Generous: on a loaded 2-core
     * machine (CI runs beside other builds) one start took over 60 s; a server that exits fails at once.
     */
    private static final java.time.Duration START_LIMIT = java.time.Duration.ofSeconds(240);

    /** The server's {@code myid} in an ensemble; 0 for a standalone server. */
    final int id;
    final int clientPort;
    final int secureClientPort;
    private final Path dir;
    private final Map<String, String> settings;
    private final List<String> jvmArgs;
    private Process process;

    /**
     * @param settings zoo.cfg lines beyond the basics (TLS, authentication)
     * @param jvmArgs extra JVM arguments (a JAAS file)
     */
    SecureServer(Map<String, String> settings, List<String> jvmArgs) throws IOException {
        this(0, freePort(), freePort(), settings, jvmArgs);
    }

    /**
     * @param id the server's {@code myid} in an ensemble, or 0 for a standalone server
     * @param clientPort the plain-text client port
     * @param secureClientPort the TLS client port (used only with TLS settings)
     * @param settings zoo.cfg lines beyond the basics (TLS, authentication, the ensemble)
     * @param jvmArgs extra JVM arguments
     */
    SecureServer(int id, int clientPort, int secureClientPort, Map<String, String> settings, List<String> jvmArgs)
            throws IOException {
        this.id = id;
        this.clientPort = clientPort;
        this.secureClientPort = secureClientPort;
        this.dir = Files.createTempDirectory("zkcoord-secure-server");
        this.settings = new LinkedHashMap<>(settings);
        this.jvmArgs = List.copyOf(jvmArgs);
    }

    /** The settings of a TLS server with {@code keyStore}, trusting the test CA; client certificates as {@code clientAuth}. */
    static Map<String, String> tls(TestCertificates certs, Path keyStore, String clientAuth) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
        s.put("ssl.keyStore.location", keyStore.toString());
        s.put("ssl.keyStore.password", Secrets.KEYSTORE_PASSWORD);
        s.put("ssl.keyStore.type", "PKCS12");
        s.put("ssl.trustStore.location", certs.trustStore.toString());
        s.put("ssl.trustStore.password", Secrets.TRUSTSTORE_PASSWORD);
        s.put("ssl.trustStore.type", "PKCS12");
        s.put("ssl.clientAuth", clientAuth);
        // The server's own check of a client certificate's host name would refuse every client
        // certificate (they name people, not hosts).
        s.put("ssl.hostnameVerification", "false");
        s.put("authProvider.x509", "org.apache.zookeeper.server.auth.X509AuthenticationProvider");
        return s;
    }

    synchronized void start() throws IOException, InterruptedException {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        if (id > 0) {
            Files.writeString(data.resolve("myid"), id + "\n", StandardCharsets.UTF_8);
        }
        List<String> lines = new ArrayList<>(List.of(
                "tickTime=500",
                "minSessionTimeout=1000",
                "maxSessionTimeout=60000",
                "dataDir=" + data,
                "clientPort=" + clientPort,
                "clientPortAddress=" + HOST,
                "admin.enableServer=false",
                "4lw.commands.whitelist=*",
                "forceSync=no"));
        if (settings.containsKey("ssl.keyStore.location")) {
            lines.add("secureClientPort=" + secureClientPort);
            lines.add("secureClientPortAddress=" + HOST);
        }
        settings.forEach((k, v) -> lines.add(k + "=" + v));
        Path cfg = dir.resolve("zoo.cfg");
        Files.write(cfg, lines, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        command.addAll(jvmArgs);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg.toString()));
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile())).start();
        // Up once it answers mntr with its state (an ensemble's member: once it has joined a quorum);
        // a server that exits fails at once.
        java.util.concurrent.atomic.AtomicBoolean exited = new java.util.concurrent.atomic.AtomicBoolean();
        boolean up = io.zkcoord.testing.Await.within(START_LIMIT, java.time.Duration.ofMillis(100), () -> {
            if (!process.isAlive()) {
                exited.set(true);
                return true;
            }
            try {
                return FourLetterWordMain.send4LetterWord(HOST, clientPort, "mntr", false, 1000).contains("zk_server_state");
            } catch (Exception e) {
                return false; // not up yet
            }
        });
        if (exited.get()) {
            throw new IOException("server exited: " + logTail());
        }
        if (up) {
            return;
        }
        throw new IOException("server did not start within " + START_LIMIT.toSeconds() + " s: " + logTail());
    }

    /** @return the plain-text connect string */
    String plainConnectString() {
        return HOST + ":" + clientPort;
    }

    /** @return the TLS connect string */
    String secureConnectString() {
        return HOST + ":" + secureClientPort;
    }

    /** SIGKILL: a crash, with no goodbye to clients or peers. Returns once the process is gone; keeps the files. */
    synchronized void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** @return what {@code srvr} says on the plain port ({@code leader}, {@code follower}, ...), or {@code down} */
    String mode() {
        try {
            return new FourLetterWords(HOST, clientPort).mode();
        } catch (RuntimeException e) {
            return "down"; // not reachable, or not serving
        }
    }

    /**
     * The sessions connected through the plain-text client port: {@code cons} lists the
     * connections of the port it is sent to (ZooKeeper runs a connection factory per port, and a
     * four-letter command answers for its own), so a session on the TLS port never shows here.
     *
     * @return the ids of the sessions connected to the plain port now
     */
    Set<Long> plainSessions() {
        Set<Long> ids = new HashSet<>();
        Matcher m = SESSION_ID.matcher(new FourLetterWords(HOST, clientPort).send("cons"));
        while (m.find()) {
            ids.add(Long.parseUnsignedLong(m.group(1), 16));
        }
        return ids;
    }

    /** @return the server's log so far */
    synchronized String log() {
        try {
            return Files.readString(dir.resolve("server.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    String logTail() {
        String all = log();
        return all.substring(Math.max(0, all.length() - 4000));
    }

    @Override
    public synchronized void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp folder: the OS clears it eventually
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

}
