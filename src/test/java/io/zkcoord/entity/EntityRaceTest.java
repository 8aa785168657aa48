package io.zkcoord.entity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enqueues racing the directory's removal: many clients on few fresh keys, each operation a new
 * lock object (as a lock per entity is used), chosen at random: lock()/unlock(), tryLock with a
 * random time, acquireAsync() cancelled after a random time, tryAcquire with a random time. Proves:
 * no two holders of a key at once, every worker ends (no stuck waiter), no node left, and no
 * directory left once each key is used once more. The server's container reaper is held off: every
 * removal is the library's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class EntityRaceTest {

    private static final Logger log = LoggerFactory.getLogger(EntityRaceTest.class);
    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 2;
    private static final int KEYS = 3;
    private static final int OPERATIONS = 25;
    /** Bound on the whole run: a stuck waiter fails the test here, not by the JUnit timeout. */
    private static final Duration RUN_BOUND = Duration.ofSeconds(90);

    @RegisterExtension
    static final ReaperlessServer SERVER = new ReaperlessServer(Duration.ofSeconds(30));

    /** The invariants of one run, over fresh keys under {@code root}. */
    @Test
    void manyClientsOnFewFreshKeysWithTimeoutsAndCancels() throws Exception {
        long seed = System.nanoTime();
        log.info("seed {}", seed);
        String root = "/entity-race";
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(root + "/order-" + k);
        }
        AtomicInteger[] holders = new AtomicInteger[KEYS];
        for (int k = 0; k < KEYS; k++) {
            holders[k] = new AtomicInteger();
        }
        AtomicLong overlaps = new AtomicLong();
        AtomicLong grants = new AtomicLong();
        AtomicLong gaveUp = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<ZkClient> clients = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        try {
            for (int c = 0; c < CLIENTS; c++) {
                clients.add(ZkClient.builder().connectString(SERVER.connectString())
                        .sessionTimeout(Duration.ofSeconds(30)).build());
            }
            for (int t = 0; t < CLIENTS * THREADS_PER_CLIENT; t++) {
                ZkClient client = clients.get(t % CLIENTS);
                SplittableRandom random = new SplittableRandom(seed + t);
                Thread w = new Thread(() -> {
                    try {
                        for (int op = 0; op < OPERATIONS; op++) {
                            int k = random.nextInt(KEYS);
                            ZkMutex mutex = new ZkMutex(client, keys.get(k));
                            Runnable critical = () -> {
                                grants.incrementAndGet();
                                if (holders[k].incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                Thread.onSpinWait();
                                holders[k].decrementAndGet();
                            };
                            switch (random.nextInt(4)) {
                                case 0 -> {
                                    mutex.lock();
                                    try {
                                        critical.run();
                                    } finally {
                                        mutex.unlock();
                                    }
                                }
                                case 1 -> {
                                    if (mutex.tryLock(random.nextInt(30), TimeUnit.MILLISECONDS)) {
                                        try {
                                            critical.run();
                                        } finally {
                                            mutex.unlock();
                                        }
                                    } else {
                                        gaveUp.incrementAndGet();
                                    }
                                }
                                case 2 -> {
                                    CompletableFuture<ZkLease> f = mutex.acquireAsync();
                                    TimeUnit.MILLISECONDS.sleep(random.nextInt(20)); // the cancel's moment, at random
                                    if (!f.cancel(true)) {
                                        try (ZkLease lease = f.join()) {
                                            critical.run();
                                        }
                                    } else {
                                        gaveUp.incrementAndGet();
                                    }
                                }
                                default -> {
                                    Optional<ZkLease> lease = mutex.tryAcquire(Duration.ofMillis(random.nextInt(30)));
                                    if (lease.isPresent()) {
                                        try (ZkLease l = lease.get()) {
                                            critical.run();
                                        }
                                    } else {
                                        gaveUp.incrementAndGet();
                                    }
                                }
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "entity-race-" + t);
                w.start();
                workers.add(w);
            }
            long bound = System.nanoTime() + RUN_BOUND.toNanos();
            for (Thread w : workers) {
                w.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(bound - System.nanoTime())));
            }
            List<String> stuck = workers.stream().filter(Thread::isAlive).map(Thread::getName).toList();
            assertEquals(List.of(), stuck, "workers still waiting after " + RUN_BOUND + " (seed " + seed + ")");
            assertEquals(List.of(), List.copyOf(failures), "seed " + seed);
            assertEquals(0, overlaps.get(), "two holders of one key at once (seed " + seed + ")");
            assertTrue(grants.get() > 0, "nothing was ever held (seed " + seed + ")");
            Await.until(Duration.ofSeconds(30), () -> keys.stream().allMatch(k -> SERVER.children(k).isEmpty()),
                    () -> "nodes left: " + keys.stream().map(SERVER::children).toList());
            long left = keys.stream().filter(this::exists).count();
            log.info("seed {}: {} grants, {} gave up, {} of {} directories left after the run", seed, grants.get(),
                    gaveUp.get(), left, KEYS);
            // A directory left (the last to leave gave up while a holder still held, and the
            // holder's last read had shown it; or a key a client used so often that it keeps it as
            // a hot key) is empty: the next use of the key by a client that is new to it removes it.
            try (ZkClient fresh = ZkClient.builder().connectString(SERVER.connectString())
                    .sessionTimeout(Duration.ofSeconds(30)).build()) {
                for (String k : keys) {
                    ZkMutex again = new ZkMutex(fresh, k);
                    again.lock();
                    again.unlock();
                    assertNull(SERVER.admin().zooKeeper().exists(k, false), k + " after one more use (seed " + seed + ")");
                }
            }
        } finally {
            for (Thread w : workers) {
                w.interrupt();
            }
            clients.forEach(ZkClient::close);
        }
    }

    private boolean exists(String dir) {
        try {
            return SERVER.admin().zooKeeper().exists(dir, false) != null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
