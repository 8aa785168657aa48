package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scenarios 1 and 7: clients contend on one lock of a three-server ensemble while its leader is killed
 * and restarted. Every client must finish all its cycles, with no two holders inside at once (no writer
 * beside anyone, for the read/write lock).
 *
 * <p>The default runs are short, to keep the suite fast; the {@code soak} runs (tag {@code soak}, run with
 * {@code mvn -Psoak}) do many more cycles and kill the leader several times per run.
 */
class LeaderFailoverFaultTest {

    private static final Logger log = LoggerFactory.getLogger(LeaderFailoverFaultTest.class);

    /** Ticks of 500 ms: elections take about a second, sessions may last up to 10 s. */
    private static final int TICK_MS = 500;
    /** Long enough for sessions to survive an election. */
    private static final Duration SESSION = Duration.ofMillis(20 * TICK_MS);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int CLIENTS = 6;
    /** Time spent inside the critical section per cycle, so readers do share it. */
    private static final long HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** Six clients on one mutex; the leader is killed mid-run and restarted; all cycles complete, one holder at a time. */
    @Test
    void mutexRidesOutALeaderKill() throws Exception {
        run("S1 mutex, leader killed", false, 15, 1);
    }

    /** Six clients on one read/write lock (about 90% reads); the leader is killed mid-run; no writer overlaps anyone. */
    @Test
    void readWriteLockRidesOutALeaderKill() throws Exception {
        run("S7 read/write 90/10, leader killed", true, 25, 1);
    }

    /** Soak: the mutex under three leader kills per run, with many more cycles. */
    @Tag("soak")
    @RepeatedTest(5)
    void mutexSoak() throws Exception {
        run("S1 soak mutex, 3 leader kills", false, 150, 3);
    }

    /** Soak: the read/write lock under three leader kills per run, with many more cycles. */
    @Tag("soak")
    @RepeatedTest(5)
    void readWriteLockSoak() throws Exception {
        run("S7 soak read/write, 3 leader kills", true, 250, 3);
    }

    /**
     * @param readWrite a read/write lock (10% writes) instead of a mutex
     * @param cycles lock cycles per client
     * @param kills how many times the leader is killed (and restarted), spread over the run
     */
    private void run(String scenario, boolean readWrite, int cycles, int kills) throws Exception {
        String dir = "/faults/failover";
        InvariantChecker checker = new InvariantChecker(scenario);
        List<ZkClient> clients = new ArrayList<>();
        ExecutorService workers = Executors.newFixedThreadPool(CLIENTS);
        try (TestingCluster cluster = FaultFixtures.cluster(3, TICK_MS)) {
            cluster.start();
            List<InstanceSpec> all = new ArrayList<>(cluster.getInstances());
            FaultFixtures.awaitQuorum(cluster, all, WAIT);
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(FaultFixtures.client(cluster.getConnectString(), SESSION));
            }
            long seed = System.nanoTime();
            log.info("{}: seed {}", scenario, seed);
            List<Future<?>> work = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                String name = "client-" + i;
                ZkClient client = clients.get(i);
                Random random = new Random(seed + i);
                if (readWrite) {
                    ZkReadWriteLock rw = new ZkReadWriteLock(client, dir);
                    rw.readLock().addLossListener(checker.lossListener());
                    rw.writeLock().addLossListener(checker.lossListener());
                    work.add(workers.submit(() -> {
                        for (int c = 0; c < cycles; c++) {
                            boolean write = random.nextInt(10) == 0;
                            cycle(checker, name, write ? rw.writeLock() : rw.readLock(), write);
                        }
                        return null;
                    }));
                } else {
                    ZkMutex mutex = new ZkMutex(client, dir);
                    mutex.addLossListener(checker.lossListener());
                    work.add(workers.submit(() -> {
                        for (int c = 0; c < cycles; c++) {
                            cycle(checker, name, mutex, true);
                        }
                        return null;
                    }));
                }
            }

            int total = CLIENTS * cycles;
            for (int k = 1; k <= kills; k++) {
                int progress = total * k / (kills + 2);
                Await.until(WAIT, () -> checker.acquisitions() >= progress || work.stream().allMatch(Future::isDone),
                        () -> "progress to " + progress + ": " + checker.summary());
                assertTrue(checker.acquisitions() < total, "the run ended before the leader kill " + k);
                InstanceSpec leader = FaultFixtures.leader(cluster).orElseThrow();
                checker.fault("leader " + leader.getServerId() + " killed (kill " + k + ")");
                cluster.killServer(leader);
                List<InstanceSpec> survivors = new ArrayList<>(all);
                survivors.remove(leader);
                InstanceSpec next = FaultFixtures.awaitQuorum(cluster, survivors, WAIT);
                log.info("{}: server {} leads now; restarting server {}", scenario, next.getServerId(), leader.getServerId());
                cluster.restartServer(leader);
                FaultFixtures.awaitQuorum(cluster, all, WAIT);
            }

            checker.assertAllDone(work, WAIT.multipliedBy(2));
            assertEquals(total, checker.acquisitions(), "every client completed its cycles");
            checker.assertDirectoryEmpty(clients.get(0).zooKeeper(), dir, WAIT);
            if (readWrite) {
                log.info("{}: up to {} readers inside together", scenario, checker.maxSharedInside());
            } else {
                assertEquals(total, checker.acceptedWrites(), "every write of a holder that was not told of a loss");
            }
            checker.assertNoViolations();
        } finally {
            workers.shutdownNow();
            for (ZkClient c : clients) {
                c.close();
            }
        }
    }

    /** One lock cycle: acquire, enter, write if exclusive, stay a moment, leave, release. */
    private static void cycle(InvariantChecker checker, String name, ZkLock lock, boolean exclusive) {
        checker.cycle(name, lock, exclusive, HOLD_NANOS, () -> { });
    }
}
