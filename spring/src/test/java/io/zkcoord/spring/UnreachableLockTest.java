package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The registry's locks while ZooKeeper is down (a real server, stopped): no acquisition holds its
 * thread for the client's retry policy; each says in one line that ZooKeeper is unreachable; one
 * WARN line for the outage and no stack trace is logged; after the server is back, locks work.
 */
class UnreachableLockTest {

    private TestingServer server;
    private ZkClient client;
    private ListAppender<ILoggingEvent> logged;
    private Logger registryLog;
    private Level savedLevel;

    @BeforeEach
    void setUp() throws Exception {
        server = new TestingServer(true);
        // The library's default retry policy (10 to 30 s without a server) and a 2 s connection timeout.
        client = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(4))
                .connectionTimeout(Duration.ofSeconds(2)).build();
        registryLog = (Logger) LoggerFactory.getLogger(ZkcoordLockRegistry.class);
        savedLevel = registryLog.getLevel();
        registryLog.setLevel(Level.INFO);
        logged = new ListAppender<>();
        logged.start();
        registryLog.addAppender(logged);
    }

    @AfterEach
    void tearDown() throws Exception {
        registryLog.detachAppender(logged);
        registryLog.setLevel(savedLevel);
        client.close();
        server.close();
    }

    @Test
    void everyAcquisitionAnswersInOneLineWhileZooKeeperIsDown() throws Exception {
        ZkcoordLockRegistry registry = new ZkcoordLockRegistry(client, "/locks-down");
        ZkcoordLock lock = registry.obtain("orders/42");
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        lock.unlock();

        server.stop();
        Await.until("the client sees the server gone", Duration.ofSeconds(30), () -> !client.state().isConnected());
        long start = System.nanoTime();
        // A wait shorter than the connection timeout ends as a wait does: false.
        assertThat(timed("tryLock(200 ms)", () -> lock.tryLock(200, TimeUnit.MILLISECONDS))).isFalse();
        // The first to wait the connection timeout (2 s) out says so; every later one at once.
        for (int poll = 0; poll < 3; poll++) {
            assertUnreachable("tryLock() #" + poll, lock::tryLock);
        }
        assertUnreachable("lock()", () -> {
            lock.lock();
            return true;
        });
        assertUnreachable("lockInterruptibly()", () -> {
            lock.lockInterruptibly();
            return true;
        });
        assertUnreachable("tryLock(200 ms)", () -> lock.tryLock(200, TimeUnit.MILLISECONDS));
        assertUnreachable("tryLock(30 s, ttl)", () -> lock.tryLock(Duration.ofSeconds(30), Duration.ofMinutes(1)));
        Duration all = Duration.ofNanos(System.nanoTime() - start);
        // The retry policy alone would take 10 s or more for each of the 7 that reach ZooKeeper.
        assertThat(all).isLessThan(Duration.ofSeconds(25));
        assertThat(lock.waitingThreads()).isZero();
        assertThat(lock.isLocked()).isFalse();

        List<ILoggingEvent> warnings = events().stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0).getFormattedMessage()).contains("ZooKeeper unreachable at " + server.getConnectString());
        assertThat(events()).allMatch(e -> e.getThrowableProxy() == null, "no stack trace is logged");

        server.restart();
        Await.until("locks work once ZooKeeper is back", Duration.ofSeconds(30), () -> {
            try {
                return lock.tryLock();
            } catch (CoordinationException e) {
                return false;
            }
        });
        lock.unlock();
        Await.until("one line when it is back", Duration.ofSeconds(10), () -> events().stream()
                .anyMatch(e -> e.getLevel() == Level.INFO && e.getFormattedMessage().contains("reachable again")));
    }

    private void assertUnreachable(String what, Acquisition acquisition) {
        assertThatThrownBy(() -> timed(what, acquisition))
                .as(what)
                .isInstanceOf(CoordinationException.class)
                .hasMessageContaining("ZooKeeper unreachable at " + server.getConnectString())
                .hasMessageNotContaining("\n")
                .hasNoCause();
    }

    private static boolean timed(String what, Acquisition acquisition) throws Exception {
        long start = System.nanoTime();
        String outcome = "threw";
        try {
            boolean result = acquisition.run();
            outcome = String.valueOf(result);
            return result;
        } finally {
            System.out.printf("%s while down: %s in %d ms%n", what, outcome, (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** @return the events logged so far (the appender adds them under its own monitor) */
    private List<ILoggingEvent> events() {
        synchronized (logged) {
            return List.copyOf(logged.list);
        }
    }

    @FunctionalInterface
    private interface Acquisition {
        boolean run() throws Exception;
    }
}
