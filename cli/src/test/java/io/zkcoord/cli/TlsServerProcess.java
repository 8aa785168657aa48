package io.zkcoord.cli;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * A ZooKeeper server process with a mutual-TLS {@code secureClientPort} for the command's x509
 * tests, and the key stores it and its clients use, all made at test time with the JDK's {@code
 * keytool} (no key material is committed): a CA; the server's key for 127.0.0.1; client keys for
 * {@link #A_DN} and {@link #B_DN}; a trust store of the CA. The server needs a client certificate
 * signed by the CA and authenticates it as scheme {@code x509}. It runs as a child process (its
 * {@code ssl.*} settings become JVM-wide system properties in the JVM that runs it), with the test
 * JVM's class path. Not thread-safe; one per test class.
 */
final class TlsServerProcess implements AutoCloseable {

    static final String A_DN = "CN=cli-a,OU=zkcoord-test,O=zkcoord";
    static final String B_DN = "CN=cli-b,OU=zkcoord-test,O=zkcoord";
    /** Every store's password; long and distinctive, so that a test can search the output for it. */
    static final String PASSWORD = "cli-ks-pw-8Rv2Tq5Wd3";
    private static final String HOST = "127.0.0.1";

    final Path dir;
    final Path trustStore;
    final Path aKeyStore;
    final Path bKeyStore;
    final int securePort;
    private final int plainPort;
    private final Process process;

    private TlsServerProcess(Path dir, int securePort, int plainPort, Process process) {
        this.dir = dir;
        this.trustStore = dir.resolve("truststore.p12");
        this.aKeyStore = dir.resolve("a.p12");
        this.bKeyStore = dir.resolve("b.p12");
        this.securePort = securePort;
        this.plainPort = plainPort;
        this.process = process;
    }

    /** Makes the key stores in {@code dir} and starts the server; returns once it answers. */
    static TlsServerProcess start(Path dir) throws IOException, InterruptedException {
        keytool(dir, "-genkeypair", "-alias", "ca", "-dname", "CN=zkcoord cli test CA", "-keyalg", "EC", "-groupname",
                "secp256r1", "-validity", "2", "-ext", "bc:c", "-keystore", "ca.p12", "-storetype", "PKCS12",
                "-storepass", PASSWORD);
        keytool(dir, "-exportcert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-file", "ca.pem");
        keytool(dir, "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", "truststore.p12",
                "-storetype", "PKCS12", "-storepass", PASSWORD);
        leaf(dir, "server", "CN=zkcoord cli test server", "SAN=ip:127.0.0.1,dns:localhost");
        leaf(dir, "a", A_DN, null);
        leaf(dir, "b", B_DN, null);
        int securePort = freePort();
        int plainPort = freePort();
        Path data = Files.createDirectories(dir.resolve("data"));
        Path cfg = dir.resolve("zoo.cfg");
        Files.write(cfg, List.of("tickTime=500", "dataDir=" + data, "clientPort=" + plainPort,
                "clientPortAddress=" + HOST, "secureClientPort=" + securePort, "secureClientPortAddress=" + HOST,
                "admin.enableServer=false", "4lw.commands.whitelist=*", "forceSync=no",
                "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                "ssl.keyStore.location=" + dir.resolve("server.p12"), "ssl.keyStore.password=" + PASSWORD,
                "ssl.keyStore.type=PKCS12", "ssl.trustStore.location=" + dir.resolve("truststore.p12"),
                "ssl.trustStore.password=" + PASSWORD, "ssl.trustStore.type=PKCS12", "ssl.clientAuth=need",
                // Client certificates name people, not hosts.
                "ssl.hostnameVerification=false",
                "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider"),
                StandardCharsets.UTF_8);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx160m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
        TlsServerProcess server = new TlsServerProcess(dir, securePort, plainPort, p);
        CliFixture.await("the TLS server answers", () -> {
            if (!p.isAlive()) {
                throw new AssertionError("the TLS server exited: " + server.log());
            }
            try {
                return FourLetterWordMain.send4LetterWord(HOST, plainPort, "mntr", false, 1000)
                        .contains("zk_server_state");
            } catch (Exception e) {
                return false; // not up yet
            }
        });
        return server;
    }

    /** @return the connect string of the TLS port */
    String connectString() {
        return HOST + ":" + securePort;
    }

    /**
     * Writes a ZooKeeper client properties file, as {@code --client-config} takes it, for mutual TLS
     * with {@code keyStore}.
     */
    Path clientProperties(String name, Path keyStore) throws IOException {
        Path file = dir.resolve(name + ".properties");
        Files.write(file, List.of("zookeeper.client.secure=true",
                "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                "zookeeper.ssl.keyStore.location=" + keyStore, "zookeeper.ssl.keyStore.password=" + PASSWORD,
                "zookeeper.ssl.keyStore.type=PKCS12", "zookeeper.ssl.trustStore.location=" + trustStore,
                "zookeeper.ssl.trustStore.password=" + PASSWORD, "zookeeper.ssl.trustStore.type=PKCS12"),
                StandardCharsets.UTF_8);
        return file;
    }

    String log() {
        try {
            return Files.readString(dir.resolve("server.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
    }

    private static void leaf(Path dir, String name, String dn, String san) throws IOException, InterruptedException {
        String store = name + ".p12";
        keytool(dir, "-genkeypair", "-alias", "key", "-dname", dn, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", "2", "-keystore", store, "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool(dir, "-certreq", "-alias", "key", "-keystore", store, "-storetype", "PKCS12", "-storepass", PASSWORD,
                "-file", name + ".csr");
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", "ca", "-validity", "2",
                "-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass", PASSWORD, "-infile", name + ".csr",
                "-outfile", name + ".pem"));
        if (san != null) {
            gencert.addAll(List.of("-ext", san));
        }
        keytool(dir, gencert.toArray(String[]::new));
        // The reply is the chain: the leaf, then the CA.
        Files.writeString(dir.resolve(name + "-chain.pem"), Files.readString(dir.resolve(name + ".pem"))
                + Files.readString(dir.resolve("ca.pem")));
        keytool(dir, "-importcert", "-noprompt", "-trustcacerts", "-alias", "key", "-file", name + "-chain.pem",
                "-keystore", store, "-storetype", "PKCS12", "-storepass", PASSWORD);
    }

    private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + output);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
