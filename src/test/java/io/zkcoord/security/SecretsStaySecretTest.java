package io.zkcoord.security;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zkcoord.ZkClient;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.opentest4j.AssertionFailedError;
import org.slf4j.LoggerFactory;

/**
 * The secrets check itself can fail, and a client's {@code toString()} and log lines carry no
 * credentials. (Every security test class runs under {@link SecretsInLogs}, which searches all it
 * logged; the checks of messages and {@code toString()}s sit in those tests.)
 */
@ExtendWith(SecretsInLogs.class)
@Timeout(60)
class SecretsStaySecretTest {

    /** A text with a secret in it is caught: the check is not vacuous. */
    @Test
    void theCheckCatchesASecret() {
        assertThrows(AssertionFailedError.class,
                () -> SecretsInLogs.assertClean("a made-up line", "login with " + Secrets.KEYSTORE_PASSWORD));
        LoggerFactory.getLogger("io.zkcoord.security").debug("captured at DEBUG, never printed");
    }

    /** A client with digest credentials and TLS passwords in its settings names none of them. */
    @Test
    void aClientNamesNoCredentials() throws Exception {
        try (TestingServer server = new TestingServer(true);
                ZkClient c = ZkClient.builder().connectString(server.getConnectString())
                        .authorization("digest", DigestHostileClientTest.ALICE.getBytes(UTF_8))
                        .sessionTimeout(Duration.ofSeconds(10)).build()) {
            SecretsInLogs.assertClean("ZkClient.toString()", c.toString());
            SecretsInLogs.assertClean("ZkSession.toString()", c.session().toString());
        }
    }
}
