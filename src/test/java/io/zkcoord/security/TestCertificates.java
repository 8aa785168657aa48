package io.zkcoord.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Key stores for the TLS tests, made at test time by the JDK's {@code keytool} (run as a process):
 * no key material is committed. A trusted CA signs the servers' and clients' certificates; a
 * rogue CA, which nobody trusts, signs certificates that must be refused. Every store is PKCS12.
 * Made once per JVM (about 25 keytool runs) and shared; the folder goes when the JVM exits.
 *
 * <p>Thread-safe: {@link #get()} is synchronized.
 */
final class TestCertificates {

    /** The subject of the client certificate of identity A: the x509 id ZooKeeper gives it. */
    static final String ALICE_DN = "CN=alice,OU=zkcoord-test,O=zkcoord";
    static final String BOB_DN = "CN=bob,OU=zkcoord-test,O=zkcoord";

    private static TestCertificates made;

    final Path dir;
    /** Trusts the CA only. */
    final Path trustStore;
    /** Trusts the rogue CA only: a client with it does not trust the servers. */
    final Path rogueTrustStore;
    /** The server's key, for 127.0.0.1 and localhost, signed by the CA. */
    final Path serverKeyStore;
    /** A server key whose certificate names another host only, signed by the CA. */
    final Path wrongHostKeyStore;
    final Path aliceKeyStore;
    final Path bobKeyStore;
    /** A client key signed by the rogue CA: a server that trusts the CA refuses it. */
    final Path rogueClientKeyStore;

    private TestCertificates(Path dir) {
        this.dir = dir;
        this.trustStore = dir.resolve("truststore.p12");
        this.rogueTrustStore = dir.resolve("rogue-truststore.p12");
        this.serverKeyStore = dir.resolve("server.p12");
        this.wrongHostKeyStore = dir.resolve("wrong-host.p12");
        this.aliceKeyStore = dir.resolve("alice.p12");
        this.bobKeyStore = dir.resolve("bob.p12");
        this.rogueClientKeyStore = dir.resolve("rogue-client.p12");
    }

    static synchronized TestCertificates get() throws IOException, InterruptedException {
        if (made == null) {
            Path dir = Files.createTempDirectory("zkcoord-tls");
            TestCertificates c = new TestCertificates(dir);
            c.make();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));
            made = c;
        }
        return made;
    }

    private void make() throws IOException, InterruptedException {
        ca("ca", "CN=zkcoord test CA");
        ca("rogue-ca", "CN=zkcoord rogue CA");
        trust("ca", trustStore);
        trust("rogue-ca", rogueTrustStore);
        List<Thread> leaves = new ArrayList<>();
        List<Exception> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        leaves.add(leaf("ca", serverKeyStore, "CN=zkcoord test server", "SAN=ip:127.0.0.1,dns:localhost", failures));
        leaves.add(leaf("ca", wrongHostKeyStore, "CN=elsewhere", "SAN=dns:elsewhere.invalid", failures));
        leaves.add(leaf("ca", aliceKeyStore, ALICE_DN, null, failures));
        leaves.add(leaf("ca", bobKeyStore, BOB_DN, null, failures));
        leaves.add(leaf("rogue-ca", rogueClientKeyStore, "CN=mallory,OU=zkcoord-test,O=zkcoord", null, failures));
        for (Thread t : leaves) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IOException("keytool failed", failures.get(0));
        }
    }

    private void ca(String alias, String dn) throws IOException, InterruptedException {
        Path store = dir.resolve(alias + ".p12");
        keytool("-genkeypair", "-alias", alias, "-dname", dn, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", "2", "-ext", "bc:c", "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass", Secrets.KEYSTORE_PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", alias, "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass", Secrets.KEYSTORE_PASSWORD, "-file", dir.resolve(alias + ".pem").toString());
    }

    private void trust(String caAlias, Path store) throws IOException, InterruptedException {
        keytool("-importcert", "-noprompt", "-alias", caAlias, "-file", dir.resolve(caAlias + ".pem").toString(),
                "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", Secrets.TRUSTSTORE_PASSWORD);
    }

    private Thread leaf(String caAlias, Path store, String dn, String san, List<Exception> failures) {
        Thread t = new Thread(() -> {
            try {
                String name = store.getFileName().toString().replace(".p12", "");
                keytool("-genkeypair", "-alias", "key", "-dname", dn, "-keyalg", "EC", "-groupname", "secp256r1",
                        "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12",
                        "-storepass", Secrets.KEYSTORE_PASSWORD);
                Path csr = dir.resolve(name + ".csr");
                keytool("-certreq", "-alias", "key", "-keystore", store.toString(), "-storetype", "PKCS12",
                        "-storepass", Secrets.KEYSTORE_PASSWORD, "-file", csr.toString());
                Path signed = dir.resolve(name + ".pem");
                List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", caAlias, "-validity", "2",
                        "-keystore", dir.resolve(caAlias + ".p12").toString(), "-storetype", "PKCS12",
                        "-storepass", Secrets.KEYSTORE_PASSWORD, "-infile", csr.toString(), "-outfile", signed.toString()));
                if (san != null) {
                    gencert.addAll(List.of("-ext", san));
                }
                keytool(gencert.toArray(String[]::new));
                // The reply is the chain: the leaf, then its CA.
                Path chain = dir.resolve(name + "-chain.pem");
                Files.writeString(chain, Files.readString(signed) + Files.readString(dir.resolve(caAlias + ".pem")));
                keytool("-importcert", "-noprompt", "-trustcacerts", "-alias", "key", "-file", chain.toString(),
                        "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", Secrets.KEYSTORE_PASSWORD);
            } catch (Exception e) {
                failures.add(e);
            }
        });
        t.start();
        return t;
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "keytool").toString());
        // Each run is a short JVM: the light collector and no optimizing compiler halve its CPU time.
        command.addAll(List.of("-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + output);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp folder: the OS clears it eventually
        }
    }
}
