package io.zkcoord.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The command on a secured ensemble: a lock whose ACL gives one digest identity everything and
 * others nothing. Run as another identity, {@code inspect} says "not authorized" and {@code run}
 * is refused at once (exit 77), the command never started; with the identity's credentials, from
 * {@code ZKCOORD_AUTH} or a file ({@code --auth digest:@FILE}), both work. {@code --client-config}
 * reads a ZooKeeper client properties file. No output carries the password.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CliSecurityTest extends CliFixture {

    private static final String PASSWORD = "cli-pw-4Ts9Qe2Wn7";
    private static final String OWNER = "owner:" + PASSWORD;
    private static final String LOCK = "/cli/secure/lock";

    private ZkClient owner() {
        return ZkClient.builder().connectString(server.getConnectString())
                .authorization("digest", OWNER.getBytes(UTF_8)).build(); // nodes: CREATOR_ALL_ACL
    }

    private static void assertNoSecret(ZkcoordProcess p) {
        assertFalse(p.out().contains(PASSWORD) || p.err().contains(PASSWORD), "the password shows: " + p);
    }

    /** inspect as another identity: "not authorized", exit 77; with the owner's credentials (environment, file): the holder. */
    @Test
    void inspectSaysNotAuthorizedUnlessGivenTheCredentials() throws Exception {
        try (ZkClient owner = owner(); ZkLease held = new ZkMutex(owner, LOCK).acquire()) {
            ZkcoordProcess stranger = ZkcoordProcess.run(dir, "inspect", connect(), LOCK);
            assertEquals(ExitStatus.NOT_AUTHORIZED, stranger.exitStatus(), stranger.toString());
            assertTrue(stranger.err().contains("not authorized (NOAUTH)") && stranger.err().contains(LOCK),
                    stranger.err());

            ZkcoordProcess fromEnvironment = ZkcoordProcess.run(dir, Map.of(Connection.AUTH_ENVIRONMENT,
                    "digest:" + OWNER), "inspect", connect(), LOCK);
            assertEquals(0, fromEnvironment.exitStatus(), fromEnvironment.toString());
            assertTrue(fromEnvironment.out().startsWith(LOCK + ": 1 holding, 0 waiting"), fromEnvironment.out());
            assertTrue(fromEnvironment.out().contains(Long.toString(held.fencingToken())), fromEnvironment.out());

            Path credentials = dir.resolve("credentials");
            Files.writeString(credentials, OWNER + "\n", UTF_8);
            ZkcoordProcess fromFile = ZkcoordProcess.run(dir, "inspect", connect(), "--auth", "digest:@" + credentials,
                    LOCK);
            assertEquals(0, fromFile.exitStatus(), fromFile.toString());
            assertTrue(fromFile.out().startsWith(LOCK + ": 1 holding, 0 waiting"), fromFile.out());
            for (ZkcoordProcess p : new ZkcoordProcess[] {stranger, fromEnvironment, fromFile}) {
                assertNoSecret(p);
            }
        }
    }

    /** run as another identity is refused at once (not after --wait), exit 77, and the command never starts. */
    @Test
    void runAsAnotherIdentityIsRefusedAtOnce() throws Exception {
        try (ZkClient owner = owner(); ZkLease held = new ZkMutex(owner, LOCK).acquire()) {
            long start = System.nanoTime();
            ZkcoordProcess stranger = ZkcoordProcess.run(dir, Map.of(Connection.AUTH_ENVIRONMENT, "digest:other:x"),
                    "run", connect(), "--lock", LOCK, "--wait", "50s", "--", "touch", "ran");
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(ExitStatus.NOT_AUTHORIZED, stranger.exitStatus(), stranger.toString());
            assertTrue(stranger.err().contains("not authorized"), stranger.err());
            assertTrue(millis < 30_000, "refused after " + millis + " ms, not at once (--wait 50s)");
            assertFalse(Files.exists(dir.resolve("ran")), "the command never started");
            assertTrue(held.isValid(), "the owner's hold stands");
        }
    }

    /** --client-config is read as ZooKeeper's tools read it: a TLS setting aimed at a plain-text port is named. */
    @Test
    void clientConfigIsApplied() throws Exception {
        Path config = dir.resolve("client.properties");
        Files.writeString(config, "zookeeper.client.secure=true\n"
                + "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n", UTF_8);
        ZkcoordProcess p = ZkcoordProcess.run(dir, "inspect", connect(), "--connect-timeout", "30s",
                "--client-config", config.toString(), "/x");
        assertEquals(ExitStatus.UNAVAILABLE, p.exitStatus(), p.toString());
        assertTrue(p.err().contains("plain text"), "the TLS client is told the port is plain text: " + p.err());

        ZkcoordProcess missing = ZkcoordProcess.run(dir, "inspect", connect(), "--client-config",
                dir.resolve("nowhere.properties").toString(), "/x");
        assertEquals(ExitStatus.USAGE, missing.exitStatus(), missing.toString());
        assertTrue(missing.err().contains("--client-config"), missing.err());
    }
}
