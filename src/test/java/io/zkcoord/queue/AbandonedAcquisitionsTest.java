package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.observe.WaitOutcome;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ClientWatchers;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Abandoned acquisitions stop at once: thousands of {@code acquireAsync()} futures, at most 500
 * open at a time, each cancelled or timed out while another client holds the lock. Once the last
 * one is abandoned, the ensemble makes no more of this client's nodes than the creates that were
 * in flight ({@link CreateWindow#SIZE} at most), and the queue drains to the holder's node.
 *
 * <p>The creates the server made after the last abandon are counted from the directory's {@code
 * cversion}, which the server raises by one for every child it creates or deletes (as this test
 * checks first): a count, not a timing, so a slow machine cannot fail it.
 * The peak and the time to drain are logged at INFO with the prefix {@code MEASURED}.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class AbandonedAcquisitionsTest {

    private static final Logger log = LoggerFactory.getLogger(AbandonedAcquisitionsTest.class);

    /** Acquisitions in all; {@code -Dabandon.total=10000} runs the full scenario. */
    private static final int TOTAL = Integer.getInteger("abandon.total", 2_000);
    private static final int OPEN = 500;
    private static final Duration WAIT = Duration.ofSeconds(120);

    private TestingServer server;
    private ZkClient observer;
    private ZkClient holderClient;
    private ZkClient client;
    private ScheduledExecutorService canceller;
    private final String path = "/abandon/mutex-" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        observer = newClient();
        holderClient = newClient();
        client = newClient();
        canceller = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void stop() throws Exception {
        if (canceller != null) {
            canceller.shutdownNow();
        }
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
        return ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(30)).build();
    }

    /** Thousands of cancelled or timed-out acquireAsync(): after the last, at most the creates in flight are made. */
    @Test
    void abandonedAcquisitionsMakeNoNodeAfterTheLastAbandon() throws Exception {
        assertCversionCountsCreatesAndDeletes();
        ZkLease holder = new ZkMutex(holderClient, path).acquire();
        FourLetterWords flw = FourLetterWords.of(server.getConnectString());

        AtomicInteger ended = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        client.addCoordinationListener(new CoordinationListener() {
            @Override
            public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
                ended.incrementAndGet();
            }
        });
        ZkMutex mutex = new ZkMutex(client, path);
        Semaphore open = new Semaphore(OPEN);
        Random random = new Random(42);
        long started = System.nanoTime();
        for (int i = 0; i < TOTAL; i++) {
            assertTrue(open.tryAcquire(WAIT.toMillis(), TimeUnit.MILLISECONDS), "a future open for " + WAIT);
            CompletableFuture<ZkLease> f = mutex.acquireAsync();
            f.whenComplete((lease, failure) -> {
                if (lease != null) {
                    granted.incrementAndGet();
                    lease.close();
                }
                open.release();
            });
            int millis = random.nextInt(20);
            if (i % 2 == 0) {
                f.orTimeout(1 + millis, TimeUnit.MILLISECONDS);
            } else {
                canceller.schedule(() -> f.cancel(false), millis, TimeUnit.MILLISECONDS);
            }
        }
        assertTrue(open.tryAcquire(OPEN, WAIT.toMillis(), TimeUnit.MILLISECONDS), "every future completed");
        Await.until("every acquisition told its end", WAIT, () -> ended.get() == TOTAL);
        long lastAbandon = System.nanoTime();
        long znodesAtLast = flw.mntrLong("zk_znode_count");

        Stat atLast = new Stat();
        int queuedAtLast = children(atLast).size();
        int[] peak = {queuedAtLast};
        Await.until(WAIT, () -> {
            int n = children(new Stat()).size();
            peak[0] = Math.max(peak[0], n);
            return n == 1;
        }, () -> "only the holder's node left in " + path);
        long drainedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastAbandon);
        // Every node queued at the last abandon but the holder's was deleted since; every node
        // created since was created and deleted: two changes each.
        long changes = stat().getCversion() - atLast.getCversion();
        long createsAfter = (changes - (queuedAtLast - 1)) / 2;

        log.info("MEASURED {} acquireAsync() (at most {} open) abandoned in {} ms: at the last abandon {} nodes queued"
                + " ({} znodes on the server); afterwards {} creates, peak {} nodes, drained to the holder's in {} ms;"
                + " {} client-side watchers", TOTAL, OPEN, TimeUnit.NANOSECONDS.toMillis(lastAbandon - started),
                queuedAtLast, znodesAtLast, createsAfter, peak[0], drainedMillis, ClientWatchers.count(client.zooKeeper()));
        assertEquals(0, granted.get(), "no acquisition held while another client holds the lock");
        assertTrue(createsAfter <= CreateWindow.SIZE, createsAfter + " nodes created after the last abandon, more than the "
                + CreateWindow.SIZE + " creates a client has in flight at most");
        assertTrue(peak[0] <= queuedAtLast + CreateWindow.SIZE, "the queue grew to " + peak[0] + " after the last abandon");
        assertTrue(ClientWatchers.count(client.zooKeeper()) <= 1, "at most one watcher, on the holder's node");
        holder.close();
    }

    /** What the count of creates rests on: a create raises its parent's cversion by one, and so does a delete. */
    private void assertCversionCountsCreatesAndDeletes() throws Exception {
        String probe = "/cversion-probe-" + System.nanoTime();
        observer.zooKeeper().create(probe, new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.PERSISTENT);
        int before = observer.zooKeeper().exists(probe, false).getCversion();
        String child = observer.zooKeeper().create(probe + "/n-", new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL);
        assertEquals(before + 1, observer.zooKeeper().exists(probe, false).getCversion(), "a create raises cversion by one");
        observer.zooKeeper().delete(child, -1);
        assertEquals(before + 2, observer.zooKeeper().exists(probe, false).getCversion(), "a delete raises cversion by one");
        observer.zooKeeper().delete(probe, -1);
    }

    private Stat stat() throws Exception {
        return observer.zooKeeper().exists(path, false);
    }

    private List<String> children(Stat stat) {
        try {
            return observer.zooKeeper().getChildren(path, false, stat);
        } catch (Exception e) {
            throw new AssertionError("cannot read " + path, e);
        }
    }
}
