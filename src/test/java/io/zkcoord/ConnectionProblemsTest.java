package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectFailedException.Problem;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SilentServer;
import java.time.Duration;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * {@link ZkClient.Builder#build()} without a session: it gives up at its connection timeout
 * whatever the network does, and says what kept it from a session.
 */
class ConnectionProblemsTest {

    private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(2);
    /**
     * What a busy machine may add to the connection timeout without the test failing; the
     * measured overshoot is far smaller (docs/session-lifecycle.md). Before the fix, the overshoot
     * was the session timeout itself: every session timeout below is longer than the connection
     * timeout plus this slack ({@link #SHORTEST_SESSION}), so that a build() that waits for the
     * session timeout still fails the check.
     */
    private static final Duration SLACK = Duration.ofSeconds(3);
    private static final int SHORTEST_SESSION = 6;
    private static final Pattern CLIENT_THREAD = Pattern.compile(".*(SendThread|EventThread|zkcoord-\\d+-).*");

    private static ConnectFailedException failToBuild(String connect, Duration sessionTimeout) {
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        long start = System.nanoTime();
        ConnectFailedException e = assertThrows(ConnectFailedException.class, () -> ZkClient.builder()
                .connectString(connect)
                .sessionTimeout(sessionTimeout)
                .connectionTimeout(CONNECTION_TIMEOUT)
                .build());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(CONNECTION_TIMEOUT) >= 0, "gave up before the connection timeout: " + took);
        assertTrue(took.compareTo(CONNECTION_TIMEOUT.plus(SLACK)) < 0, "overran the connection timeout: took "
                + took.toMillis() + " ms with a session timeout of " + sessionTimeout.toMillis() + " ms");
        assertTrue(e.getMessage().contains(connect), e.getMessage());
        Await.until(Duration.ofSeconds(5), () -> clientThreads(before).isEmpty(),
                () -> "threads of the failed attempt still alive: " + clientThreads(before));
        return e;
    }

    private static Set<String> clientThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t) && t.isAlive() && CLIENT_THREAD.matcher(t.getName()).matches())
                .map(Thread::getName)
                .collect(Collectors.toSet());
    }

    /** A server that accepts TCP and never answers: build() gives up at its connection timeout, however long the session timeout, and reports a timeout. */
    @ParameterizedTest(name = "session timeout {0} s")
    @ValueSource(ints = {SHORTEST_SESSION, 10, 30})
    void silentServerTimesOutAtTheConnectionTimeout(int sessionSeconds) throws Exception {
        try (SilentServer silent = new SilentServer()) {
            ConnectFailedException e = failToBuild(silent.connectString(), Duration.ofSeconds(sessionSeconds));
            assertTrue(silent.accepted() > 0, "the client never connected to the silent server");
            assertEquals(Problem.TIMEOUT, e.problem(), e.getMessage());
            assertTrue(e.getMessage().contains("accepted the connection"), e.getMessage());
        }
    }

    /** Nothing listens on the port: connection refused. */
    @Test
    void refusedConnectionIsReportedAsRefused() {
        ConnectFailedException e = failToBuild("127.0.0.1:" + InstanceSpec.getRandomPort(), Duration.ofSeconds(SHORTEST_SESSION));
        assertEquals(Problem.CONNECTION_REFUSED, e.problem(), e.getMessage());
        assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
    }

    /** A host name that does not resolve (the reserved .invalid domain): reported as such, naming the host. */
    @Test
    void unresolvableHostIsReportedAsUnknown() {
        ConnectFailedException e = failToBuild("zk1.invalid:2181,zk2.invalid:2181", Duration.ofSeconds(SHORTEST_SESSION));
        assertEquals(Problem.UNKNOWN_HOST, e.problem(), e.getMessage());
        assertTrue(e.getMessage().contains("zk1.invalid:2181: the host name does not resolve"), e.getMessage());
    }

    /** A 1 ms session timeout against a real server: reported as a setting that cannot be had, not as a network timeout. */
    @Test
    void tooShortSessionTimeoutIsReportedAsASettingRefused() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            ConnectFailedException e = failToBuild(server.getConnectString(), Duration.ofMillis(1));
            assertEquals(Problem.SETTING_REFUSED, e.problem(), e.getMessage());
            assertTrue(e.getMessage().contains("session timeout asked for (1 ms) is too short"), e.getMessage());
        }
    }
}
