package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Waits that block share their session's one watcher of a node with waits that are abandoned all
 * the time (short {@code tryAcquire}s, cancelled futures) on the same client: no blocked waiter is
 * stranded, and the lock never has two holders. Real in-process {@link TestingServer}; every
 * wait has a deadline, and a stranded waiter shows as a thread that never finishes its rounds.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SharedWatchHandoffTest {

    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final int ROUNDS = 20;

    private TestingServer server;
    private ZkClient holderClient;
    private ZkClient client;
    private final String base = "/handoff/" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        holderClient = newClient();
        client = newClient();
    }

    @AfterEach
    void stop() throws Exception {
        for (ZkClient c : new ZkClient[] {client, holderClient}) {
            if (c != null) {
                c.close();
            }
        }
        if (server != null) {
            server.close();
        }
    }

    private ZkClient newClient() {
        return ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(20)).build();
    }

    /** Blocking acquires and abandoned short waits on one mutex of one client: every blocked acquire ends. */
    @Test
    void blockedMutexWaitersAreNeverStrandedByAbandonedWaitsOfTheirSession() throws Exception {
        String path = base + "/mutex";
        ZkLease holder = new ZkMutex(holderClient, path).acquire();
        ZkMutex mutex = new ZkMutex(client, path);
        run(mutex, mutex, holder);
    }

    /** Blocked readers behind a write hold, with abandoned write polls of the same client among them. */
    @Test
    void blockedReadersAreNeverStrandedByAbandonedWritePollsOfTheirSession() throws Exception {
        String path = base + "/rw";
        ZkLease holder = new ZkReadWriteLock(holderClient, path).writeLock().acquire();
        ZkReadWriteLock rw = new ZkReadWriteLock(client, path);
        run(rw.readLock(), rw.writeLock(), holder);
    }

    private void run(ZkLock blocking, ZkLock polled, ZkLease holder) throws Exception {
        AtomicBoolean stopPolling = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger writersIn = new AtomicInteger();
        AtomicInteger readersIn = new AtomicInteger();
        boolean shared = blocking != polled; // readers may hold together, never with a writer
        List<Thread> pollers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            pollers.add(new Thread(() -> {
                try {
                    for (int k = 0; !stopPolling.get(); k++) {
                        if (n % 2 == 0) {
                            Optional<ZkLease> l = polled.tryAcquire(Duration.ofMillis(1 + k % 3));
                            if (l.isPresent()) {
                                enter(writersIn, readersIn, true, failure);
                                writersIn.decrementAndGet();
                                l.get().close();
                            }
                        } else {
                            CompletableFuture<ZkLease> f = polled.acquireAsync();
                            if (!f.cancel(false)) {
                                ZkLease l = f.join();
                                enter(writersIn, readersIn, true, failure);
                                writersIn.decrementAndGet();
                                l.close();
                            }
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "poller-" + i));
        }
        List<Thread> blockers = new ArrayList<>();
        AtomicInteger rounds = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            blockers.add(new Thread(() -> {
                try {
                    for (int r = 0; r < ROUNDS; r++) {
                        try (ZkLease l = blocking.acquire()) {
                            enter(writersIn, readersIn, !shared, failure);
                            (shared ? readersIn : writersIn).decrementAndGet();
                        }
                        rounds.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "blocker-" + i));
        }
        pollers.forEach(Thread::start);
        blockers.forEach(Thread::start);
        holder.close();
        long end = System.nanoTime() + DEADLINE.toNanos();
        for (Thread t : blockers) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
        }
        stopPolling.set(true);
        for (Thread t : pollers) {
            t.join(DEADLINE.toMillis());
            assertFalse(t.isAlive(), t.getName() + " did not stop");
        }
        if (failure.get() != null) {
            throw new AssertionError("a thread failed", failure.get());
        }
        for (Thread t : blockers) {
            assertFalse(t.isAlive(), t.getName() + " is stranded after " + rounds.get() + " rounds in all");
        }
        assertEquals(3 * ROUNDS, rounds.get());
    }

    private static void enter(AtomicInteger writersIn, AtomicInteger readersIn, boolean writer,
            AtomicReference<Throwable> failure) {
        if (writer) {
            if (writersIn.incrementAndGet() != 1 || readersIn.get() != 0) {
                failure.compareAndSet(null, new AssertionError("a writer holds with another holder"));
            }
        } else {
            readersIn.incrementAndGet();
            if (writersIn.get() != 0) {
                failure.compareAndSet(null, new AssertionError("a reader holds with a writer"));
            }
        }
    }
}
