package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The recipes over mutual TLS, against a server process whose {@code secureClientPort} needs
 * client certificates: exclusion, FIFO and growing fencing tokens; a session rebuilt after
 * an expiry on the server is on TLS again, with the same client certificate; a lock's nodes can
 * carry an {@code x509} ACL naming the client certificate, and the hostile-client matrix holds
 * for another certificate's identity.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(300)
class TlsTest {

    private static TestCertificates certs;
    private static SecureServer server;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        certs = TestCertificates.get();
        server = TlsServers.main();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(ZkClient::close);
    }

    private ZkClient tlsClient(Path keyStore, ZkClient.Builder builder) {
        ZkClient c = builder.connectString(server.secureConnectString())
                .clientConfig(TlsSettings.client(certs.trustStore, keyStore)).sessionTimeout(Duration.ofSeconds(6))
                .connectionTimeout(Duration.ofSeconds(30)).build();
        clients.add(c);
        return c;
    }

    private static List<String> x509Ids(ZooKeeper zk) throws InterruptedException {
        List<String> ids = new ArrayList<>();
        for (ClientInfo info : zk.whoAmI()) {
            if (info.getAuthScheme().equals("x509")) {
                ids.add(info.getUser());
            }
        }
        return ids;
    }

    /** Three TLS clients, three threads each, share a mutex: never two holders, every token above the last. */
    @Test
    void exclusionAndGrowingTokensOverTls() throws Exception {
        List<ZkMutex> mutexes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            mutexes.add(new ZkMutex(tlsClient(certs.aliceKeyStore, ZkClient.builder()), "/tls/mutex"));
        }
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 9; t++) {
            ZkMutex mutex = mutexes.get(t % 3);
            workers.add(CompletableFuture.runAsync(() -> {
                for (int cycle = 0; cycle < 8; cycle++) {
                    mutex.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                        tokens.add(mutex.fencingToken());
                        inside.decrementAndGet();
                    } finally {
                        mutex.unlock();
                    }
                }
            }));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        assertEquals(0, violations.get(), "two holders at once");
        assertEquals(72, tokens.size());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "token " + i + " grows: " + tokens);
        }
    }

    /** Waiters over TLS are granted in the order they queued. */
    @Test
    void fifoOverTls() throws Exception {
        ZkClient holderClient = tlsClient(certs.aliceKeyStore, ZkClient.builder());
        ZkLease held = new ZkMutex(holderClient, "/tls/fifo").acquire();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<ZkLease>> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int me = i;
            ZkClient c = tlsClient(certs.aliceKeyStore, ZkClient.builder());
            CompletableFuture<ZkLease> f = new ZkMutex(c, "/tls/fifo").acquireAsync();
            waiting.add(f.thenApply(lease -> {
                order.add(me);
                return lease;
            }));
            int queued = i + 2;
            Await.until("waiter " + i + " queued", Duration.ofSeconds(20),
                    () -> childCount(holderClient, "/tls/fifo") == queued);
        }
        held.release();
        for (CompletableFuture<ZkLease> f : waiting) {
            f.get(30, TimeUnit.SECONDS).release();
        }
        assertEquals(List.of(0, 1, 2, 3), order);
    }

    private static int childCount(ZkClient c, String path) {
        try {
            return c.zooKeeper().getChildren(path, false).size();
        } catch (Exception e) {
            return -1;
        }
    }

    /**
     * After the session expires on the server, the client builds a new one with the same settings:
     * it is on TLS again (the server names it by its client certificate, scheme x509), and locks work.
     */
    @Test
    void aRebuiltSessionIsStillOnTls() throws Exception {
        ZkClient alice = tlsClient(certs.aliceKeyStore, ZkClient.builder());
        assertEquals(List.of(TestCertificates.ALICE_DN), x509Ids(alice.zooKeeper()), "the first session is x509");
        long firstSession = alice.sessionId();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        alice.addConnectionListener(states::add);

        // Expired through the plain-text port: the session is the server's, whatever port made it.
        SessionExpiry.expireOnServer(alice.zooKeeper(), server.plainConnectString(), Duration.ofSeconds(30));
        Await.until("a new session after LOST", Duration.ofSeconds(60),
                () -> states.contains(ConnectionState.LOST) && alice.state().isConnected()
                        && alice.sessionId() != firstSession);
        assertNotEquals(firstSession, alice.sessionId());
        assertEquals(List.of(TestCertificates.ALICE_DN), x509Ids(alice.zooKeeper()),
                "the rebuilt session is on TLS with the same client certificate");
        assertTrue(alice.zooKeeper().getClientConfig().getBoolean("zookeeper.client.secure"));
        ZkMutex mutex = new ZkMutex(alice, "/tls/after-expiry");
        assertTrue(mutex.tryLock(20, TimeUnit.SECONDS));
        mutex.unlock();
    }

    /**
     * Mutual TLS and the x509 ACL scheme: alice's lock nodes carry an ACL for her certificate's
     * name alone; bob, with another certificate of the same CA, gets nowhere (the hostile-client
     * matrix), and alice sees nothing of it.
     */
    @Test
    void x509AclKeepsAnotherCertificateOut() throws Exception {
        List<ACL> aliceOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", TestCertificates.ALICE_DN)));
        ZkClient.Builder aliceBuilder = ZkClient.builder()
                .aclProvider(path -> path.startsWith("/x509") ? aliceOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE);
        ZkClient holder = tlsClient(certs.aliceKeyStore, aliceBuilder);
        ZkClient waiter = tlsClient(certs.aliceKeyStore, ZkClient.builder()
                .aclProvider(path -> path.startsWith("/x509") ? aliceOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE));
        ZkClient bob = tlsClient(certs.bobKeyStore, ZkClient.builder());
        assertEquals(List.of(TestCertificates.BOB_DN), x509Ids(bob.zooKeeper()));

        ZkMutex mutex = new ZkMutex(holder, "/x509/check");
        try (ZkLease lease = mutex.acquire()) {
            assertEquals(aliceOnly, holder.zooKeeper().getACL(lease.nodePath(), new Stat()), "the node's ACL");
            assertEquals(aliceOnly, holder.zooKeeper().getACL("/x509/check", new Stat()), "the directory's ACL");
        }
        List<HostileMatrix.Cell> cells = new HostileMatrix("/x509", holder, waiter, bob).run();
        assertFalse(cells.isEmpty());
    }
}
