package io.zkcoord.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The provider while ZooKeeper is down (a real server, stopped): lock() does not hold the
 * scheduler's thread for the client's retry policy, skips the run (empty), and logs one line for
 * the outage, with no stack trace; once the server is back, locks are taken again.
 */
class UnreachableTest {

    /** As a scheduler would call it, once per tick. */
    private static final int TICKS = 5;

    private TestingServer server;
    private ZkClient client;
    private ListAppender<ILoggingEvent> logged;
    private Logger providerLog;
    private Level savedLevel;

    @BeforeEach
    void setUp() throws Exception {
        server = new TestingServer(true);
        // The library's default retry policy (exponentialBackoff(50 ms, 2 s, 10): 10 to 30 s
        // without a server, the policy the 13-18 s stalls came from), a 2 s connection timeout.
        client = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(4))
                .connectionTimeout(Duration.ofSeconds(2)).build();
        providerLog = (Logger) LoggerFactory.getLogger(ZkcoordLockProvider.class);
        logged = new ListAppender<>();
        logged.start();
        savedLevel = providerLog.getLevel();
        providerLog.setLevel(Level.INFO);
        providerLog.addAppender(logged);
    }

    @AfterEach
    void tearDown() throws Exception {
        providerLog.detachAppender(logged);
        providerLog.setLevel(savedLevel);
        client.close();
        server.close();
    }

    @Test
    void lockSkipsTheRunWithOneLineWhileZooKeeperIsDown() throws Exception {
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, "/shedlock-down");
        provider.lock(config("report")).orElseThrow().unlock();

        server.stop();
        Await.until("the client sees the server gone", Duration.ofSeconds(30), () -> !client.state().isConnected());
        long start = System.nanoTime();
        for (int tick = 0; tick < TICKS; tick++) {
            long tickStart = System.nanoTime();
            Optional<SimpleLock> lock = provider.lock(config("report"));
            System.out.printf("tick %d while down: %s in %d ms%n", tick, lock.isPresent() ? "locked" : "skipped",
                    (System.nanoTime() - tickStart) / 1_000_000);
            assertFalse(lock.isPresent(), "no lock while ZooKeeper is down");
        }
        Duration all = Duration.ofNanos(System.nanoTime() - start);
        // The connection timeout (2 s) once, then at once; the retry policy would take 10 s or more per tick.
        assertTrue(all.compareTo(Duration.ofSeconds(25)) < 0, TICKS + " ticks took " + all.toMillis() + " ms");

        List<ILoggingEvent> warnings = events().stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
        assertEquals(1, warnings.size(), "one line for the outage: " + warnings);
        assertTrue(warnings.get(0).getFormattedMessage().contains("ZooKeeper unreachable at " + server.getConnectString()),
                warnings.get(0).getFormattedMessage());
        assertTrue(events().stream().allMatch(e -> e.getThrowableProxy() == null), "no stack trace is logged");

        server.restart();
        Await.until("locks are taken again once ZooKeeper is back", Duration.ofSeconds(30),
                () -> provider.lock(config("report")).map(l -> {
                    l.unlock();
                    return true;
                }).orElse(false));
        Await.until("one line when it is back", Duration.ofSeconds(10), () -> events().stream()
                .anyMatch(e -> e.getLevel() == Level.INFO && e.getFormattedMessage().contains("reachable again")));
    }

    /** @return the events logged so far (the appender adds them under its own monitor) */
    private List<ILoggingEvent> events() {
        synchronized (logged) {
            return List.copyOf(logged.list);
        }
    }

    private static LockConfiguration config(String name) {
        return new LockConfiguration(ClockProvider.now(), name, Duration.ofMinutes(1), Duration.ZERO);
    }
}
