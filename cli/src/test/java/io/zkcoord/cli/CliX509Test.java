package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The command over mutual TLS, B being another client certificate: A's certificate (scheme {@code
 * x509}) holds a mutex and waits on it, under an ACL that gives A's certificate everything; {@code
 * zkcoord run} and {@code zkcoord inspect} with {@code --client-config} naming B's key store are
 * refused at once (exit 77), the command never started, A undisturbed; with A's key store, {@code
 * inspect} shows the holder. No output carries the key-store password.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CliX509Test extends CliFixture {

    /**
     * A TLS handshake from a JVM that has just started can take well over the default connection
     * timeout on a busy machine; every run here ends as soon as it is refused or served.
     */
    private static final String SLOW_HANDSHAKE = "50s";

    private static final String MUTEX = "/x509/mutex";

    private TlsServerProcess tls;
    private Path aProperties;
    private Path bProperties;
    private final List<ZkClient> aClients = new ArrayList<>();

    @BeforeAll
    void startTlsServer() throws Exception {
        tls = TlsServerProcess.start(Files.createTempDirectory("zkcoord-cli-tls"));
        aProperties = tls.clientProperties("a", tls.aKeyStore);
        bProperties = tls.clientProperties("b", tls.bKeyStore);
    }

    @AfterAll
    void stopTlsServer() throws Exception {
        aClients.forEach(ZkClient::close);
        if (tls != null) {
            tls.close();
        }
    }

    private ZkClient a() throws Exception {
        List<ACL> aOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", TlsServerProcess.A_DN)));
        ZkClient c = ZkClient.builder().connectString(tls.connectString())
                .clientConfig(new ZKClientConfig(aProperties.toString()))
                .aclProvider(path -> path.startsWith("/x509") ? aOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE)
                .build();
        aClients.add(c);
        return c;
    }

    /** B's certificate: run (with and without --wait) and inspect exit 77 at once; A's certificate inspects; A loses nothing. */
    @Test
    void anotherCertificateIsRefusedAtOnce() throws Exception {
        ZkClient holder = a();
        ZkClient waiter = a();
        ZkLease hold = new ZkMutex(holder, MUTEX).acquire();
        CompletableFuture<ZkLease> waiting = new ZkMutex(waiter, MUTEX).acquireAsync();
        await("A's waiter queued", () -> queue(holder).size() == 2);
        List<String> before = queue(holder);
        String connect = "--connect=" + tls.connectString();
        List<String> measured = new ArrayList<>();

        for (List<String> wait : List.of(List.<String>of(), List.of("--wait", "10m"))) {
            List<String> args = new ArrayList<>(List.of("run", connect, "--connect-timeout", SLOW_HANDSHAKE,
                    "--client-config", bProperties.toString(),
                    "--lock", MUTEX));
            args.addAll(wait);
            args.addAll(List.of("--", "touch", "ran"));
            long start = System.nanoTime();
            ZkcoordProcess b = ZkcoordProcess.run(dir, args.toArray(String[]::new));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            measured.add("run --lock as B's certificate " + (wait.isEmpty() ? "without --wait" : "--wait 10m")
                    + ": exit " + b.exitStatus() + ", " + millis + " ms");
            assertEquals(ExitStatus.NOT_AUTHORIZED, b.exitStatus(), b.toString());
            assertTrue(b.err().contains("not authorized (NOAUTH)") && b.err().contains(MUTEX), b.err());
            assertTrue(millis < 60_000, "refused after " + millis + " ms, not at once");
            assertFalse(Files.exists(dir.resolve("ran")), "the command never started");
            assertNoSecret(b);
        }

        long start = System.nanoTime();
        ZkcoordProcess inspectAsB = ZkcoordProcess.run(dir, "inspect", connect, "--connect-timeout", SLOW_HANDSHAKE,
                "--client-config",
                bProperties.toString(), MUTEX);
        measured.add("inspect as B's certificate: exit " + inspectAsB.exitStatus() + ", "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
        assertEquals(ExitStatus.NOT_AUTHORIZED, inspectAsB.exitStatus(), inspectAsB.toString());
        assertTrue(inspectAsB.err().contains("not authorized (NOAUTH)"), inspectAsB.err());
        assertNoSecret(inspectAsB);

        start = System.nanoTime();
        ZkcoordProcess inspectAsA = ZkcoordProcess.run(dir, "inspect", connect, "--connect-timeout", SLOW_HANDSHAKE,
                "--client-config",
                aProperties.toString(), MUTEX);
        measured.add("inspect as A's certificate: exit " + inspectAsA.exitStatus() + ", "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
        assertEquals(0, inspectAsA.exitStatus(), inspectAsA.toString());
        assertTrue(inspectAsA.out().startsWith(MUTEX + ": 1 holding, 1 waiting"), inspectAsA.out());
        assertTrue(inspectAsA.out().contains(Long.toString(hold.fencingToken())), inspectAsA.out());
        assertNoSecret(inspectAsA);

        assertEquals(before, queue(holder), "no node added or removed");
        assertTrue(hold.isValid() && !hold.whenLost().isDone(), "A's hold stands");
        assertFalse(waiting.isDone(), "A's waiter still waits");
        hold.release();
        try (ZkLease next = waiting.get(30, TimeUnit.SECONDS)) {
            assertTrue(next.isValid(), "A's waiter takes over");
        }
        measured.forEach(m -> System.out.println("MEASURED x509 " + m));
    }

    private static List<String> queue(ZkClient a) {
        try {
            return a.zooKeeper().getChildren(MUTEX, false).stream().sorted().toList();
        } catch (Exception e) {
            return List.of();
        }
    }

    private static void assertNoSecret(ZkcoordProcess p) {
        assertFalse(p.out().contains(TlsServerProcess.PASSWORD) || p.err().contains(TlsServerProcess.PASSWORD),
                "the key-store password shows: " + p);
    }
}
