package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A TLS client whose servers are up but serve no one, because they have no quorum (an ensemble
 * starting, or electing): such a server closes each TLS connection before the handshake. That is
 * not a refusal of the client's TLS, which retrying cannot change: an acquisition waiting for the
 * first session keeps waiting through the client's TLS probes, and holds once the quorum forms.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES) // a safety net only: every wait below has its own deadline
class TlsNoQuorumTest {

    /** Each wait's limit: a server's JVM starting, an election, a probe, on a busy 2-core machine. */
    private static final Duration WAIT = Duration.ofSeconds(120);
    /**
     * The client's retry policy: without a session its acquisition waits as long as the test may run before it
     * gives up (the default policy's 10 retries give up after 6 to 11 s, less than a server's restart and an
     * election take under load). A refused TLS fails it at once whatever the policy: that must not happen here.
     */
    private static final RetryPolicy PATIENT = RetryPolicy.untilElapsed(Duration.ofMinutes(10), Duration.ofMillis(200));

    private static TestCertificates certs;
    private static SecureEnsemble ensemble;

    @RegisterExtension
    final TlsWatchLog watchLog = new TlsWatchLog();

    @BeforeAll
    static void startEnsemble() throws Exception {
        certs = TestCertificates.get();
        ensemble = SecureEnsemble.shared(certs, WAIT); // shared with TlsEnsembleFaultTest: started, or restored
    }


    /**
     * Two of three servers killed: the third is up, electing, and closes every connection before
     * the TLS handshake. A start() client naming that server waits through two probes (no
     * TlsConnectException), and holds once a second server is back and the quorum serves.
     */
    @Test
    void serversWithoutQuorumAreNotATlsRefusal() throws Exception {
        SecureServer alone = ensemble.servers().get(0);
        List<SecureServer> killed = List.of(ensemble.servers().get(1), ensemble.servers().get(2));
        for (SecureServer s : killed) {
            s.kill();
        }
        Await.until("server s" + alone.id + " has no quorum", WAIT,
                () -> !List.of("leader", "follower", "standalone").contains(alone.mode()));
        try (ZkClient client = ZkClient.builder().connectString(alone.secureConnectString())
                .clientConfig(TlsSettings.client(certs.trustStore, certs.aliceKeyStore))
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(PATIENT).start()) {
            CompletableFuture<ZkLease> waiting = new ZkMutex(client, "/tls-no-quorum/lock").acquireAsync();
            Await.until("two TLS probes judged", WAIT, () -> watchLog.verdicts().size() >= 2);
            assertFalse(waiting.isDone(), () -> "the acquisition still waits for a session: " + watchLog.verdicts() + " "
                    + waiting.handle((lease, failure) -> String.valueOf(failure)).join());

            LoggerFactory.getLogger(TlsNoQuorumTest.class).info("MEASURED probes of a server without quorum: {}",
                    watchLog.verdicts());
            killed.get(0).start();
            ensemble.awaitQuorum(List.of(alone, killed.get(0)), WAIT);
            try (ZkLease lease = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                assertTrue(lease.isValid(), "holds once the quorum serves");
            }
        }
    }
}
