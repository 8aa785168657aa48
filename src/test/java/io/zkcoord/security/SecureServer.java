package io.zkcoord.security;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * One standalone ZooKeeper server as a JVM process of its own, with a plain-text client port and,
 * when given TLS settings, a {@code secureClientPort} served by Netty. A process of its own because
 * ZooKeeper's server turns its {@code ssl.*} (and other unknown) settings into JVM-wide system
 * properties ({@code zookeeper.ssl.*}), which ZooKeeper's client also reads: in the test's JVM they
 * would leak into the clients under test.
 *
 * <p>Thread-safe (methods synchronized).
 */
final class SecureServer implements AutoCloseable {

    static final String HOST = "127.0.0.1";

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
        this.clientPort = freePort();
        this.secureClientPort = freePort();
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
        // Up once it answers mntr with its state; a server that exits fails at once.
        java.util.concurrent.atomic.AtomicBoolean exited = new java.util.concurrent.atomic.AtomicBoolean();
        boolean up = io.zkcoord.testing.Await.within(java.time.Duration.ofSeconds(60), java.time.Duration.ofMillis(100), () -> {
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
        throw new IOException("server did not start within 60 s: " + logTail());
    }

    /** @return the plain-text connect string */
    String plainConnectString() {
        return HOST + ":" + clientPort;
    }

    /** @return the TLS connect string */
    String secureConnectString() {
        return HOST + ":" + secureClientPort;
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
