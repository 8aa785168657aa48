package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.TlsConnectException;
import io.zkcoord.TlsConnectException.Problem;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TLS connection that cannot work is reported at once, naming the cause, instead of after the
 * connection timeout: an untrusted server, a server certificate for another host (host-name
 * verification is on by default), a client certificate the server refuses, a plain-text port.
 *
 * <p>"At once" is told apart from "after the connection timeout" by what is thrown, not by a clock:
 * only the TLS probe's verdict makes the {@link TlsConnectException} with its {@link Problem}; a
 * build() that waited out the timeout would throw a plain {@link CoordinationException}. The
 * connection timeout is made far longer than any probe takes on a busy machine, and build() must
 * return before it.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(600) // a safety net only
class TlsFailureTest {

    private static final Logger LOG = LoggerFactory.getLogger(TlsFailureTest.class);

    /** Far longer than "at once": a failure that waits for it is the bug. */
    private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(120);

    private static TestCertificates certs;
    private static SecureServer server;
    private static SecureServer wrongHost;

    @BeforeAll
    static void startServers() throws Exception {
        certs = TestCertificates.get();
        server = TlsServers.main();
        wrongHost = TlsServers.wrongHost();
    }

    private static TlsConnectException refused(String what, String connectString, ZKClientConfig config,
            Problem problem, String... expectedWords) {
        long start = System.nanoTime();
        Throwable got = null;
        try (ZkClient c = ZkClient.builder().connectString(connectString).clientConfig(config)
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(CONNECTION_TIMEOUT).build()) {
            got = null;
        } catch (Throwable t) {
            got = t;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LOG.info("MEASURED {}: {} ms, {}", what, millis, String.valueOf(got));
        TlsConnectException e = assertInstanceOf(TlsConnectException.class, got, what + ": " + got);
        assertEquals(problem, e.problem(), what + ": " + e.getMessage());
        for (Throwable t = e; t != null; t = t.getCause()) {
            SecretsInLogs.assertClean(what + ": the exception", t.toString());
        }
        for (String word : expectedWords) {
            assertTrue(e.getMessage().contains(word), what + ": the message names '" + word + "': " + e.getMessage());
        }
        assertTrue(millis < CONNECTION_TIMEOUT.toMillis(), what + ": reported after " + millis
                + " ms, not before the connection timeout");
        return e;
    }

    /** A client that does not trust the server's certificate is told so at once. */
    @Test
    void untrustedServer() {
        refused("untrusted server", server.secureConnectString(),
                TlsSettings.client(certs.rogueTrustStore, certs.aliceKeyStore), Problem.SERVER_NOT_TRUSTED, "not trusted");
    }

    /** Host-name verification is on by default: a certificate for another host is refused at once, naming the host. */
    @Test
    void certificateForAnotherHost() throws Exception {
        refused("certificate for another host", wrongHost.secureConnectString(),
                TlsSettings.client(certs.trustStore, null), Problem.HOST_NAME_MISMATCH, "host name", "127.0.0.1");
        // The same server with verification turned off connects: it was the host name, nothing else.
        ZKClientConfig off = TlsSettings.client(certs.trustStore, null);
        off.setProperty("zookeeper.ssl.hostnameVerification", "false");
        try (ZkClient c = ZkClient.builder().connectString(wrongHost.secureConnectString()).clientConfig(off)
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(CONNECTION_TIMEOUT).build()) {
            assertTrue(c.state().isConnected());
        }
    }

    /** A client certificate the server does not trust (or none, where the server needs one) is told at once. */
    @Test
    void clientCertificateRefused() {
        refused("client certificate from an untrusted CA", server.secureConnectString(),
                TlsSettings.client(certs.trustStore, certs.rogueClientKeyStore), Problem.CLIENT_CERTIFICATE_REFUSED,
                "client certificate");
        refused("no client certificate where one is needed", server.secureConnectString(),
                TlsSettings.client(certs.trustStore, null), Problem.CLIENT_CERTIFICATE_REFUSED, "client certificate");
    }

    /** A TLS client pointed at a plain-text port is told that the port does not speak TLS. */
    @Test
    void plainTextPort() {
        refused("TLS client on the plain-text port", server.plainConnectString(),
                TlsSettings.client(certs.trustStore, certs.aliceKeyStore), Problem.NOT_A_TLS_PORT, "TLS", "plain");
    }

    /** Control: the right settings connect. */
    @Test
    void theRightSettingsConnect() {
        try (ZkClient c = ZkClient.builder().connectString(server.secureConnectString())
                .clientConfig(TlsSettings.client(certs.trustStore, certs.aliceKeyStore))
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(CONNECTION_TIMEOUT).build()) {
            assertTrue(c.state().isConnected());
        }
    }
}
