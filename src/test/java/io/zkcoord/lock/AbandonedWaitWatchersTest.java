package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ClientWatchers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits that end without the lock (timed out, interrupted) leave no watcher each behind: the
 * watcher objects a client holds stay bounded by the distinct nodes its acquisitions watched
 * (here, the other client's holders), whatever the number of waits abandoned, and go once those
 * nodes go. Counted in the waiting client's own ZooKeeper handle ({@link ClientWatchers}); the
 * numbers are logged at INFO with the prefix {@code MEASURED}.
 *
 * <p>Real in-process {@link TestingServer}; every wait is on a condition with a deadline.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class AbandonedWaitWatchersTest {

    private static final Logger log = LoggerFactory.getLogger(AbandonedWaitWatchersTest.class);

    /**
     * Polls per thread in the default build (a leak of one watcher per abandoned poll shows after a few);
     * {@code -Dwatchers.polls=5000} runs the full scenario of four threads x 5,000. The soak runs 500.
     */
    private static final int POLLS = Integer.getInteger("watchers.polls", 125);
    /** Timed-out tryLocks one after the other in the default build; the soak runs 400. */
    private static final int TIMED_OUT = 100;
    /** Interrupted read-lock waits one after the other in the default build; the soak runs 200. */
    private static final int INTERRUPTED = 50;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestingServer server;
    private ZkClient observer;
    private ZkClient holderClient;
    private ZkClient client;
    private final String base = "/watchers/" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        observer = newClient();
        holderClient = newClient();
        client = newClient();
    }

    @AfterEach
    void stop() throws Exception {
        for (ZkClient c : new ZkClient[] {client, holderClient, observer}) {
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

    private int watchers() {
        return ClientWatchers.count(client.zooKeeper());
    }

    /**
     * Four locks held by another client, four threads polling them with tryLock(5 ms): the waiting
     * client keeps at most one watcher per held lock, and none once the holders release.
     */
    @Test
    void pollingTryLocksKeepOneWatcherPerWatchedNode() throws Exception {
        pollingTryLocks(POLLS);
    }

    /** Soak: {@link #pollingTryLocksKeepOneWatcherPerWatchedNode} with four times the polls. */
    @Tag("soak")
    @Test
    void pollingTryLocksKeepOneWatcherPerWatchedNodeSoak() throws Exception {
        pollingTryLocks(4 * POLLS);
    }

    private void pollingTryLocks(int polls) throws Exception {
        int locks = 4;
        List<ZkLease> holders = new ArrayList<>();
        List<Thread> pollers = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < locks; i++) {
            String path = base + "/poll-" + i;
            holders.add(new ZkMutex(holderClient, path).acquire());
            ZkMutex mutex = new ZkMutex(client, path);
            pollers.add(new Thread(() -> {
                try {
                    for (int k = 0; k < polls; k++) {
                        if (mutex.tryLock(5, TimeUnit.MILLISECONDS)) {
                            mutex.unlock();
                            throw new AssertionError("held " + path + " while another client holds it");
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "poller-" + i));
        }
        pollers.forEach(Thread::start);
        for (Thread t : pollers) {
            t.join(TimeUnit.MINUTES.toMillis(4));
            assertFalse(t.isAlive(), t.getName() + " still polling");
        }
        if (failure.get() != null) {
            throw new AssertionError("a poller failed", failure.get());
        }
        int after = watchers();
        log.info("MEASURED {} threads x {} tryLock(5 ms) against held locks: {} client-side watchers", locks, polls, after);
        assertTrue(after <= locks, after + " watchers after " + locks * polls + " abandoned polls of " + locks + " held locks");

        holders.forEach(ZkLease::close);
        Await.until("no watcher once the holders released", WAIT, () -> watchers() == 0);
    }

    /** 100 tryLock(2 ms) on one held lock, one after the other, leave at most one watcher. */
    @Test
    void timedOutTryLocksLeaveAtMostOneWatcher() throws Exception {
        timedOutTryLocks(TIMED_OUT);
    }

    /** Soak: {@link #timedOutTryLocksLeaveAtMostOneWatcher} with 400. */
    @Tag("soak")
    @Test
    void timedOutTryLocksLeaveAtMostOneWatcherSoak() throws Exception {
        timedOutTryLocks(4 * TIMED_OUT);
    }

    private void timedOutTryLocks(int tries) throws Exception {
        String path = base + "/timed";
        ZkLease holder = new ZkMutex(holderClient, path).acquire();
        ZkMutex mutex = new ZkMutex(client, path);
        for (int k = 0; k < tries; k++) {
            assertFalse(mutex.tryLock(2, TimeUnit.MILLISECONDS), "held while another client holds it");
        }
        int after = watchers();
        log.info("MEASURED {} tryLock(2 ms) against a held lock: {} client-side watchers", tries, after);
        assertTrue(after <= 1, after + " watchers after " + tries + " timed-out tryLock(2 ms)");
        holder.close();
        Await.until("no watcher once the holder released", WAIT, () -> watchers() == 0);
    }

    /**
     * 50 read-lock waits behind another client's write hold, each interrupted once its node is
     * queued: at most one watcher is left (on the write holder's node).
     */
    @Test
    void interruptedReadLockWaitsLeaveAtMostOneWatcher() throws Exception {
        interruptedReadLockWaits(INTERRUPTED);
    }

    /** Soak: {@link #interruptedReadLockWaitsLeaveAtMostOneWatcher} with 200. */
    @Tag("soak")
    @Test
    void interruptedReadLockWaitsLeaveAtMostOneWatcherSoak() throws Exception {
        interruptedReadLockWaits(4 * INTERRUPTED);
    }

    private void interruptedReadLockWaits(int waits) throws Exception {
        String path = base + "/read";
        ZkLease writer = new ZkReadWriteLock(holderClient, path).writeLock().acquire();
        Lock read = new ZkReadWriteLock(client, path).readLock();
        for (int k = 0; k < waits; k++) {
            CompletableFuture<Throwable> ended = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try {
                    read.lockInterruptibly();
                    read.unlock();
                    ended.complete(new AssertionError("read lock granted while another client holds the write lock"));
                } catch (Throwable t) {
                    ended.complete(t);
                }
            }, "reader-" + k);
            reader.start();
            LockQueue.awaitSize(observer, path, 2, WAIT);
            reader.interrupt();
            Throwable t = ended.get(30, TimeUnit.SECONDS);
            assertTrue(t instanceof InterruptedException, "the wait ended with " + t);
            reader.join(TimeUnit.SECONDS.toMillis(30));
            LockQueue.awaitSize(observer, path, 1, WAIT);
        }
        int after = watchers();
        log.info("MEASURED {} interrupted read-lock waits behind a write hold: {} client-side watchers", waits, after);
        assertTrue(after <= 1, after + " watchers after " + waits + " interrupted read-lock waits");
        writer.close();
        Await.until("no watcher once the writer released", WAIT, () -> watchers() == 0);
    }
}
