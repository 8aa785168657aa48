package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.security.auth.login.Configuration;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SASL DIGEST-MD5 through JAAS against a server process that enforces authentication ({@code
 * enforce.auth.enabled=true}, {@code enforce.auth.schemes=sasl}). The JAAS files are written at
 * test time; the client picks its section with {@code zookeeper.sasl.clientconfig}.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(300)
class SaslTest {

    private static final Logger LOG = LoggerFactory.getLogger(SaslTest.class);

    private static SecureServer server;
    private static final String JAAS = "java.security.auth.login.config";
    private static String previousJaas;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("zkcoord-sasl");
        Path serverJaas = dir.resolve("server-jaas.conf");
        Files.writeString(serverJaas, "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
                + "  user_alice=\"" + Secrets.SASL_PASSWORD + "\";\n};\n", StandardCharsets.UTF_8);
        Path clientJaas = dir.resolve("client-jaas.conf");
        Files.writeString(clientJaas, section("ZkcoordGood", Secrets.SASL_PASSWORD)
                + section("ZkcoordBad", Secrets.BOB_PASSWORD), StandardCharsets.UTF_8);
        server = new SecureServer(Map.of(
                "authProvider.sasl", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
                "enforce.auth.enabled", "true",
                "enforce.auth.schemes", "sasl"),
                // DIGEST-MD5 is refused in ZooKeeper 3.9's default FIPS mode, on both sides.
                List.of("-Djava.security.auth.login.config=" + serverJaas, "-Dzookeeper.fips-mode=false"));
        server.start();
        // Set for this JVM's clients only while this class runs (ZooKeeper's SASL client reads
        // the property, and JAAS caches the configuration it names: dropped so it is read again).
        previousJaas = System.getProperty(JAAS);
        System.setProperty(JAAS, clientJaas.toString());
        Configuration.setConfiguration(null);
    }

    private static String section(String name, String password) {
        return name + " {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username=\"alice\"\n"
                + "  password=\"" + password + "\";\n};\n";
    }

    @AfterAll
    static void stop() throws Exception {
        if (previousJaas == null) {
            System.clearProperty(JAAS);
        } else {
            System.setProperty(JAAS, previousJaas);
        }
        Configuration.setConfiguration(null);
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeClients() {
        clients.forEach(ZkClient::close);
    }

    private static ZKClientConfig sasl(String section) {
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, section);
        config.setProperty("zookeeper.fips-mode", "false");
        return config;
    }

    private ZkClient.Builder builder(ZKClientConfig config) {
        return ZkClient.builder().connectString(server.plainConnectString()).clientConfig(config)
                .sessionTimeout(Duration.ofSeconds(10)).connectionTimeout(Duration.ofSeconds(30));
    }

    /** A SASL login works: the session is named sasl:alice, locks work, and nodes can carry a sasl ACL. */
    @Test
    void saslLoginWorks() throws Exception {
        List<ACL> aliceOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("sasl", "alice")));
        ZkClient alice = builder(sasl("ZkcoordGood")).aclProvider(path -> aliceOnly).build();
        clients.add(alice);
        List<String> ids = new ArrayList<>();
        for (ClientInfo info : alice.zooKeeper().whoAmI()) {
            ids.add(info.getAuthScheme() + ":" + info.getUser());
        }
        assertTrue(ids.contains("sasl:alice"), "the session is alice's: " + ids);
        ZkMutex mutex = new ZkMutex(alice, "/sasl/lock");
        try (ZkLease lease = mutex.acquire()) {
            assertEquals(aliceOnly, alice.zooKeeper().getACL(lease.nodePath(), new Stat()));
            assertTrue(lease.fencingToken() > 0);
        }
    }

    /** A SASL login with the wrong password is reported as such, at once, not as a timeout. */
    @Test
    void aFailedLoginIsReportedAtOnce() {
        long start = System.nanoTime();
        Throwable got = null;
        try (ZkClient c = builder(sasl("ZkcoordBad")).build()) {
            got = null;
        } catch (Throwable t) {
            got = t;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LOG.info("MEASURED failed SASL login: {} ms, {}", millis, String.valueOf(got));
        CoordinationException e = assertInstanceOf(CoordinationException.class, got);
        assertTrue(e.getMessage().contains("authentication failed") && e.getMessage().contains("ZkcoordBad"),
                e.getMessage());
        SecretsInLogs.assertClean("the failed login's message", e.getMessage());
        assertTrue(millis < 10_000, "reported after " + millis + " ms, not at once (the connection timeout is 30 s)");
    }
}
