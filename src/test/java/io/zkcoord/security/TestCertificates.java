package io.zkcoord.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Key stores for the TLS tests, made at test time by the JDK's {@code keytool} (run as a process):
 * no key material is committed. A trusted CA signs the servers' and clients' certificates; a
 * rogue CA, which nobody trusts, signs certificates that must be refused. Every store is PKCS12.
 * Made once (about 25 keytool runs, some 10 s on 2 cores) and kept in a folder of the system's
 * temporary directory named after this checkout, which the next JVMs reuse for {@link #REUSE_FOR}
 * (CI runs the TLS tests in three builds: the default one and the contract legs on ZooKeeper 3.8 and
 * on Java 25); the certificates are valid for 2 days, so a reused one is always valid for a day more.
 * A folder that is older, or lacks a store, is made anew.
 *
 * <p>Thread-safe: {@link #get()} is synchronized.
 */
final class TestCertificates {

    /** The subject of the client certificate of identity A: the x509 id ZooKeeper gives it. */
    static final String ALICE_DN = "CN=alice,OU=zkcoord-test,O=zkcoord";
    static final String BOB_DN = "CN=bob,OU=zkcoord-test,O=zkcoord";

    private static TestCertificates made;

    /** How long a made set of stores is reused by later JVMs; the certificates are valid for 2 days. */
    static final Duration REUSE_FOR = Duration.ofHours(24);

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
            Path kept = Path.of(System.getProperty("java.io.tmpdir"), "zkcoord-tls-"
                    + Integer.toHexString(Path.of("").toAbsolutePath().toString().hashCode()));
            TestCertificates c = new TestCertificates(kept);
            if (!c.reusable()) {
                deleteQuietly(kept);
                Path fresh = Files.createTempDirectory("zkcoord-tls");
                new TestCertificates(fresh).make();
                try {
                    // Published whole or not at all: a JVM that looks meanwhile sees no folder, or all of it.
                    Files.move(fresh, kept, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    // Another JVM published its own first, or the move is not possible here: use this one.
                    if (!c.reusable()) {
                        c = new TestCertificates(fresh);
                        Path ours = fresh;
                        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(ours)));
                    } else {
                        deleteQuietly(fresh);
                    }
                }
            }
            made = c;
        }
        return made;
    }

    /** Whether every store is there, made less than {@link #REUSE_FOR} ago. */
    private boolean reusable() throws IOException {
        for (Path store : List.of(trustStore, rogueTrustStore, serverKeyStore, wrongHostKeyStore, aliceKeyStore,
                bobKeyStore, rogueClientKeyStore)) {
            if (!Files.isRegularFile(store) || Files.size(store) == 0) {
                return false;
            }
        }
        Instant madeAt = Files.getLastModifiedTime(trustStore).toInstant();
        return madeAt.isAfter(Instant.now().minus(REUSE_FOR));
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
