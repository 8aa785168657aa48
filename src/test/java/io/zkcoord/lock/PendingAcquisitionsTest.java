package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Many pending {@code acquireAsync()} calls on one {@link ZkMutex} of one client: they are granted one at a time,
 * in the order they were made, and waiting costs no thread per acquisition.
 *
 * <p>Real in-process {@link TestingServer}; waits are on conditions with deadlines. Measured numbers (time for
 * all grants, thread counts) are logged at INFO with the prefix {@code MEASURED}; only the invariants are
 * asserted, plus the thread bound the library promises ("no thread waits").
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PendingAcquisitionsTest {

    private static final Logger log = LoggerFactory.getLogger(PendingAcquisitionsTest.class);

    private static final int PENDING = 1_000;
    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(20);
    /** Generous deadlines: the machine has 2 cores and may be running another build. */
    private static final Duration QUEUE_WAIT = Duration.ofSeconds(60);
    private static final Duration ALL_GRANTED_WAIT = Duration.ofSeconds(120);

    private TestingServer server;
    private ZkClient observer;
    private ZkClient holderClient;
    private ZkClient client;
    private ExecutorService releaser;
    private final String path = "/pending/mutex-" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        observer = newClient();
        holderClient = newClient();
        client = newClient();
        releaser = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "test-releaser");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void stop() throws Exception {
        if (releaser != null) {
            releaser.shutdownNow();
            releaser.awaitTermination(10, TimeUnit.SECONDS);
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
        return ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
    }

    private int nodeCount() {
        return LockQueue.children(observer, path).size();
    }

    private static List<String> zkcoordThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("zkcoord"))
                .sorted()
                .collect(Collectors.toList());
    }

    /**
     * 1,000 acquireAsync() calls queued behind another client's holder are all granted once it releases, in
     * call order (FIFO), never two leases valid at once, with no node left; while all 1,000 are pending the JVM
     * has at most 2 more zkcoord threads than with none pending.
     */
    @Test
    void thousandPendingAcquisitionsAreGrantedOneAtATimeInOrder() throws Exception {
        ZkMutex mutex = new ZkMutex(client, path);
        ZkLease holder = new ZkMutex(holderClient, path).acquire();
        List<String> before = zkcoordThreads();

        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger maxHolders = new AtomicInteger();
        List<String> violations = new CopyOnWriteArrayList<>();
        Set<String> callbackThreads = ConcurrentHashMap.newKeySet();
        AtomicReference<ZkLease> previous = new AtomicReference<>();
        CountDownLatch released = new CountDownLatch(PENDING);
        AtomicReference<Long> firstGrantNanos = new AtomicReference<>();

        List<CompletableFuture<ZkLease>> futures = new ArrayList<>(PENDING);
        for (int i = 0; i < PENDING; i++) {
            int index = i;
            CompletableFuture<ZkLease> f = mutex.acquireAsync();
            futures.add(f);
            f.whenComplete((lease, failure) -> {
                if (failure != null) {
                    violations.add("acquisition " + index + " failed: " + failure);
                    released.countDown();
                    return;
                }
                firstGrantNanos.compareAndSet(null, System.nanoTime());
                callbackThreads.add(Thread.currentThread().getName());
                order.add(index);
                int now = holders.incrementAndGet();
                maxHolders.accumulateAndGet(now, Math::max);
                if (now != 1) {
                    violations.add("lease " + index + " granted while " + (now - 1) + " other(s) held");
                }
                ZkLease before1 = previous.getAndSet(lease);
                if (before1 != null && before1.isValid()) {
                    violations.add("lease " + index + " granted while the previous lease is still valid");
                }
                if (!lease.isValid()) {
                    violations.add("lease " + index + " handed out invalid");
                }
                releaser.execute(() -> {
                    holders.decrementAndGet();
                    lease.release();
                    released.countDown();
                });
            });
        }
        Await.until(QUEUE_WAIT, () -> nodeCount() == PENDING + 1,
                () -> "all " + PENDING + " acquisitions queued behind the holder; nodes now " + nodeCount());
        List<String> during = zkcoordThreads();
        long doneEarly = futures.stream().filter(CompletableFuture::isDone).count();
        assertEquals(0, doneEarly, "acquisitions done while the holder still holds");

        long start = System.nanoTime();
        holder.release();
        boolean all = released.await(ALL_GRANTED_WAIT.toSeconds(), TimeUnit.SECONDS);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Long first = firstGrantNanos.get();
        long toFirstMillis = first == null ? -1 : TimeUnit.NANOSECONDS.toMillis(first - start);

        Await.until(QUEUE_WAIT, () -> nodeCount() == 0, () -> "no node left under " + path + "; still " + nodeCount());
        List<String> after = zkcoordThreads();

        log.info("MEASURED {} pending acquireAsync() granted in turn in {} ms ({} us per handoff; first grant after"
                + " {} ms)", order.size(), tookMillis, order.isEmpty() ? -1 : tookMillis * 1000 / order.size(),
                toFirstMillis);
        log.info("MEASURED zkcoord threads: {} with none pending, {} with {} pending, {} after all were granted",
                before.size(), during.size(), PENDING, after.size());
        log.info("MEASURED zkcoord threads with none pending: {}", before);
        log.info("MEASURED zkcoord threads with {} pending: {}", PENDING, during);
        log.info("MEASURED zkcoord threads after: {}", after);
        log.info("MEASURED grant callbacks ran on: {}", new TreeSet<>(callbackThreads));

        assertTrue(all, "granted and released " + (PENDING - released.getCount()) + " of " + PENDING + " within "
                + ALL_GRANTED_WAIT.toSeconds() + " s");
        assertEquals(List.of(), violations);
        assertEquals(IntStream.range(0, PENDING).boxed().collect(Collectors.toList()), new ArrayList<>(order),
                "grants in the order acquireAsync() was called");
        assertEquals(1, maxHolders.get(), "most leases valid at once");
        assertTrue(callbackThreads.stream().noneMatch(n -> n.contains("EventThread") || n.contains("SendThread")),
                "grant callbacks ran on ZooKeeper's threads: " + callbackThreads);
        assertTrue(during.size() <= before.size() + 2, "zkcoord threads with " + PENDING + " pending: "
                + during.size() + ", with none: " + before.size() + " (" + during + " vs " + before + ")");
    }
}
