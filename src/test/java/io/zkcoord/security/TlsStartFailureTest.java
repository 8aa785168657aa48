package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.TlsConnectException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.SilentServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client made by {@code start()} (it returns before connecting) whose TLS cannot work: what
 * waits for a session, and what asks while the refusal lasts, fails at once with the {@link
 * TlsConnectException} naming the cause, instead of waiting out its time limit; the refusal is
 * logged once at ERROR, however often it is found again; the client keeps trying, and once the servers accept it (here: its trust
 * store fixed on disk) a session comes and the recipes work.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(300)
class TlsStartFailureTest {

    private static final Logger LOG = LoggerFactory.getLogger(TlsStartFailureTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static TestCertificates certs;
    private static SecureServer server;

    @RegisterExtension
    final TlsWatchLog watchLog = new TlsWatchLog();

    @BeforeAll
    static void startServer() throws Exception {
        certs = TestCertificates.get();
        server = TlsServers.main();
    }

    /**
     * A trust store file of the test's own, trusting only the rogue authority (not the server) until the
     * test fixes it.
     */
    private static Path rogueTrustStoreCopy() throws IOException {
        Path trustStore = Files.createTempFile(certs.dir, "truststore", ".p12");
        Files.copy(certs.rogueTrustStore, trustStore, StandardCopyOption.REPLACE_EXISTING);
        return trustStore;
    }

    private static ZkClient started(String connectString, ZKClientConfig config) {
        return ZkClient.builder().connectString(connectString).clientConfig(config)
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(Duration.ofSeconds(30)).start();
    }

    /**
     * An untrusted server: an acquisition already waiting for the first session, and a tryLock(30 s)
     * asked after, both fail with TlsConnectException(SERVER_NOT_TRUSTED), long before 30 s; one
     * ERROR line over three probes; the client stays CONNECTING (it keeps trying).
     */
    @Test
    void untrustedServerFailsWaitingAndNewAcquisitionsAtOnce() throws Exception {
        long start = System.nanoTime();
        try (ZkClient client = started(server.secureConnectString(),
                TlsSettings.client(certs.rogueTrustStore, certs.aliceKeyStore))) {
            ZkMutex mutex = new ZkMutex(client, "/tls-start/untrusted");
            CompletableFuture<ZkLease> waiting = mutex.acquireAsync();
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS), "the waiting acquisition fails");
            long waitingMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertRefused(failed.getCause(), TlsConnectException.Problem.SERVER_NOT_TRUSTED, "not trusted");

            long tryStart = System.nanoTime();
            TlsConnectException refused = assertThrows(TlsConnectException.class,
                    () -> mutex.tryLock(30, TimeUnit.SECONDS), "a new tryLock(30 s) fails");
            long tryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - tryStart);
            assertRefused(refused, TlsConnectException.Problem.SERVER_NOT_TRUSTED, "not trusted");
            assertTrue(refused.getMessage().contains("/tls-start/untrusted"), "names the lock: " + refused.getMessage());

            TlsConnectException sessionRefused = assertThrows(TlsConnectException.class, client::session);
            assertEquals(TlsConnectException.Problem.SERVER_NOT_TRUSTED, sessionRefused.problem());
            assertEquals(ConnectionState.CONNECTING, client.state(), "the client keeps trying");
            Await.until("three probes refused", WAIT,
                    () -> watchLog.verdicts().stream().filter(v -> v.contains("SERVER_NOT_TRUSTED")).count() >= 3);
            LOG.info("MEASURED start() with an untrusted server: a waiting acquireAsync failed {} ms after start(),"
                    + " a new tryLock(30 s) in {} ms", waitingMillis, tryMillis);
        }
        assertEquals(1, watchLog.errors().stream().filter(e -> e.contains("not trusted")).count(),
                "the refusal is logged once at ERROR, however many probes found it: " + watchLog.errors());
    }

    /** A TLS client pointed at a plain-text port: a tryLock(30 s) fails with NOT_A_TLS_PORT. */
    @Test
    void plainTextPortFailsAtOnce() throws Exception {
        try (ZkClient client = started(server.plainConnectString(),
                TlsSettings.client(certs.trustStore, certs.aliceKeyStore))) {
            long start = System.nanoTime();
            TlsConnectException refused = assertThrows(TlsConnectException.class,
                    () -> new ZkMutex(client, "/tls-start/plain").tryLock(30, TimeUnit.SECONDS));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertRefused(refused, TlsConnectException.Problem.NOT_A_TLS_PORT, "plain");
            LOG.info("MEASURED start() on a plain-text port: tryLock(30 s) called at once failed in {} ms", millis);
        }
    }

    /**
     * The client's trust store is fixed on disk while it is refused: it connects by itself, and
     * the recipes work again.
     */
    @Test
    void recoversOnceTheTrustStoreIsFixed() throws Exception {
        Path trustStore = rogueTrustStoreCopy();
        try (ZkClient client = started(server.secureConnectString(),
                TlsSettings.client(trustStore, certs.aliceKeyStore))) {
            ZkMutex mutex = new ZkMutex(client, "/tls-start/recovered");
            TlsConnectException refused = assertThrows(TlsConnectException.class,
                    () -> mutex.tryLock(30, TimeUnit.SECONDS));
            assertEquals(TlsConnectException.Problem.SERVER_NOT_TRUSTED, refused.problem());

            Files.copy(certs.trustStore, trustStore, StandardCopyOption.REPLACE_EXISTING);
            long fixed = System.nanoTime();
            Await.until("a session once the trust store is fixed", WAIT, () -> client.state().isConnected());
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fixed);
            assertTrue(mutex.tryLock(30, TimeUnit.SECONDS), "the lock works again");
            mutex.unlock();
            LOG.info("MEASURED start() recovered {} ms after its trust store was fixed", millis);
        } finally {
            Files.deleteIfExists(trustStore);
        }
    }

    /**
     * A refusal that a session ended (the trust store fixed, the session came before the next
     * probe) is over: an acquisition started when that session has just expired, in the moment
     * before the client reports it LOST (held open here by a listener on SUSPENDED), waits for the
     * next session and holds, instead of failing with the old refusal.
     */
    @Test
    void aRefusalEndedByASessionDoesNotFailAcquisitionsAtTheNextExpiry() throws Exception {
        Path trustStore = rogueTrustStoreCopy();
        try (ZkClient client = started(server.secureConnectString(),
                TlsSettings.client(trustStore, certs.aliceKeyStore))) {
            ZkMutex mutex = new ZkMutex(client, "/tls-start/refusal-over");
            // Which comes first once the store is fixed, the session or a probe that finds no
            // refusal, is up to timing; only the first leaves a refusal that a session ended.
            boolean endedBySession = false;
            for (int attempt = 0; attempt < 10 && !endedBySession; attempt++) {
                if (attempt > 0) {
                    Files.copy(certs.rogueTrustStore, trustStore, StandardCopyOption.REPLACE_EXISTING);
                    ZooKeeper old = client.zooKeeper();
                    SessionExpiry.expireOnServer(old, server.plainConnectString(), WAIT);
                    Await.until("the expired session replaced", WAIT, () -> client.zooKeeper() != old);
                }
                assertThrows(TlsConnectException.class, () -> mutex.tryLock(30, TimeUnit.SECONDS), "refused");
                int mark = watchLog.watchLines().size();
                Files.copy(certs.trustStore, trustStore, StandardCopyOption.REPLACE_EXISTING);
                Await.until("a session once the trust store is fixed", WAIT, () -> client.state().isConnected());
                endedBySession = watchLog.watchLines().subList(mark, watchLog.watchLines().size()).stream()
                        .anyMatch(l -> l.contains("the TLS refusal logged before is over"));
            }
            assertTrue(endedBySession, "a session ended a refusal in one of 10 tries: " + watchLog.watchLines());

            CountDownLatch release = new CountDownLatch(1);
            AtomicBoolean held = new AtomicBoolean();
            client.addConnectionListener(state -> {
                if (state == ConnectionState.SUSPENDED && held.compareAndSet(false, true)) {
                    try {
                        release.await(WAIT.toSeconds(), TimeUnit.SECONDS); // holds the client's events thread
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            ZooKeeper old = client.zooKeeper();
            CompletableFuture<ZkLease> started;
            try {
                SessionExpiry.expireOnServer(old, server.plainConnectString(), WAIT);
                Await.until("the handle told of the expiry", WAIT, () -> !old.getState().isAlive());
                assertTrue(held.get(), "the client's SUSPENDED is being delivered: LOST is not yet");
                started = mutex.acquireAsync();
            } finally {
                release.countDown();
            }
            try (ZkLease lease = started.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                assertTrue(lease.isValid(), "holds in the next session");
            }
        } finally {
            Files.deleteIfExists(trustStore);
        }
    }

    /**
     * close() while a probe waits on a server that accepts TCP and never answers the handshake
     * (here with a 30 s connection timeout, so each probe may wait 15 s): no thread of the probe is
     * left behind, as close() promises for a client that is still connecting.
     */
    @Test
    void closeDuringAProbeLeavesNoProbeThread() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            ZkClient client = started(silent.connectString(), TlsSettings.client(certs.trustStore, certs.aliceKeyStore));
            try {
                Await.until("a TLS probe is under way", WAIT, () -> !probeThreads().isEmpty());
            } finally {
                client.close();
            }
            Await.until(Duration.ofSeconds(5), () -> probeThreads().isEmpty(),
                    () -> "probe threads left after close(): " + probeThreads());
        }
    }

    private static List<String> probeThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.contains("tls-probe")).toList();
    }

    private static void assertRefused(Throwable t, TlsConnectException.Problem problem, String word) {
        TlsConnectException e = assertInstanceOf(TlsConnectException.class, t, String.valueOf(t));
        assertEquals(problem, e.problem(), e.getMessage());
        assertTrue(e.getMessage().contains(word), "names the cause: " + e.getMessage());
        for (Throwable c = e; c != null; c = c.getCause()) {
            SecretsInLogs.assertClean("the exception", c.toString());
        }
    }
}
