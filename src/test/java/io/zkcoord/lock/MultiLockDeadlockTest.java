package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * No deadlock, whatever the order and mix: 8 clients each loop over multi-locks of a random 2 to 4
 * of 6 paths in random order, while 3 more clients take single {@link ZkMutex}es of those paths,
 * for 10 seconds (thousands of cycles; the soak runs 60 s). Every client finishes (each acquisition is given 20 s: a deadlock would show as
 * a timeout), no path ever has two holders, tokens per path strictly increase, no node is left.
 */
@Timeout(180)
class MultiLockDeadlockTest {

    private static final int PATHS = 6;
    private static final int MULTI_CLIENTS = 8;
    private static final int MUTEX_CLIENTS = 3;

    private static final long ACQUIRE_SECONDS = 20;

    private final AtomicReferenceArray<String> holders = new AtomicReferenceArray<>(PATHS);
    private final long[] lastToken = new long[PATHS];
    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final AtomicLong multiCycles = new AtomicLong();
    private final AtomicLong mutexCycles = new AtomicLong();

    @Test
    void mixedMultiAndSingleLocksNeverDeadlock() throws Exception {
        run(Duration.ofSeconds(10));
    }

    /** Soak: the same for a minute. */
    @Tag("soak")
    @Test
    void mixedMultiAndSingleLocksNeverDeadlockForAMinute() throws Exception {
        run(Duration.ofSeconds(60));
    }

    private void run(Duration length) throws Exception {
        long seed = Long.getLong("multilock.seed", System.nanoTime());
        System.out.println("multi-lock deadlock test seed " + seed + " (-Dmultilock.seed=" + seed + " replays the choices)");
        try (TestingServer server = new TestingServer(true)) {
            List<ZkClient> clients = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(MULTI_CLIENTS + MUTEX_CLIENTS);
            long end = System.nanoTime() + length.toNanos();
            try {
                for (int c = 0; c < MULTI_CLIENTS + MUTEX_CLIENTS; c++) {
                    ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                            .sessionTimeout(Duration.ofSeconds(15)).build();
                    clients.add(client);
                    Random random = new Random(seed + c);
                    boolean multi = c < MULTI_CLIENTS;
                    String name = (multi ? "multi-" : "mutex-") + c;
                    Thread t = new Thread(() -> {
                        try {
                            while (System.nanoTime() < end && violations.isEmpty()) {
                                cycle(client, random, multi, name);
                            }
                        } catch (Throwable e) {
                            violations.add(name + " failed: " + e);
                        } finally {
                            done.countDown();
                        }
                    }, name);
                    threads.add(t);
                    t.start();
                }
                boolean finished = done.await(length.toSeconds() + ACQUIRE_SECONDS + 30, TimeUnit.SECONDS);
                assertTrue(finished, "every client finished (no deadlock); violations: " + violations);
                assertEquals(List.of(), new ArrayList<>(violations));
                System.out.println("MEASURED multi-lock deadlock test: " + multiCycles.get() + " multi-lock cycles, "
                        + mutexCycles.get() + " mutex cycles in " + length.toSeconds() + " s, 0 violations");
                assertTrue(multiCycles.get() > 0 && mutexCycles.get() > 0);
                ZkClient observer = clients.get(0);
                Await.until("no node left in any path", Duration.ofSeconds(20), () -> nodesLeft(observer) == 0);
            } finally {
                threads.forEach(Thread::interrupt);
                for (ZkClient c : clients) {
                    c.close();
                }
            }
        }
    }

    private void cycle(ZkClient client, Random random, boolean multi, String name) throws Exception {
        List<Integer> chosen = new ArrayList<>();
        for (int i = 0; i < PATHS; i++) {
            chosen.add(i);
        }
        Collections.shuffle(chosen, random);
        chosen = chosen.subList(0, multi ? 2 + random.nextInt(3) : 1);
        List<String> paths = new ArrayList<>();
        chosen.forEach(i -> paths.add(path(i)));
        ZkLock lock = multi ? new ZkMultiLock(client, paths) : new ZkMutex(client, paths.get(0));
        if (!lock.tryLock(ACQUIRE_SECONDS, TimeUnit.SECONDS)) {
            violations.add(name + " waited " + ACQUIRE_SECONDS + " s for " + paths + ": deadlock or starvation");
            return;
        }
        long token = lock.fencingToken();
        try {
            for (int i : chosen) {
                String other = holders.get(i);
                if (!holders.compareAndSet(i, null, name)) {
                    violations.add(name + " holds " + path(i) + " while " + other + " holds it too");
                }
                synchronized (lastToken) {
                    if (token <= lastToken[i]) {
                        violations.add(name + " token " + token + " on " + path(i) + " not above " + lastToken[i]);
                    }
                    lastToken[i] = token;
                }
            }
            Thread.onSpinWait(); // the critical section: nothing to do but be checked
        } finally {
            for (int i : chosen) {
                holders.compareAndSet(i, name, null);
            }
            lock.unlock();
            (multi ? multiCycles : mutexCycles).incrementAndGet();
        }
    }

    private static String path(int i) {
        return "/deadlock/p" + i;
    }

    private static int nodesLeft(ZkClient observer) {
        int left = 0;
        for (int i = 0; i < PATHS; i++) {
            try {
                left += observer.zooKeeper().getChildren(path(i), false).size();
            } catch (KeeperException.NoNodeException e) {
                // the container went: nothing left there
            } catch (KeeperException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
        return left;
    }
}
