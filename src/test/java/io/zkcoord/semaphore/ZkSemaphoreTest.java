package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZkSemaphore} against a real in-process ZooKeeper server: at most N valid leases across clients, FIFO
 * grants, the recorded permit count, session expiry, every way of not getting a lease (interrupt, timeout,
 * cancel, closed client, a create whose reply was lost) leaving no node, and argument checks.
 *
 * <p>One {@link TestingServer} per class, a fresh path per test, no mocks. Every wait is on a condition with a
 * deadline ({@link Await}, {@code Future.get(timeout)}); the one bounded observation ("the directory stays empty
 * for 500 ms") is said so where it is used. The server's container reaper is slowed to once an hour, so that a
 * directory emptied between two steps of a test keeps its recorded count (see {@link #startServer()}); the one
 * test about the reaper starts a server of its own that reaps quickly.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ZkSemaphoreTest {

    private static final Logger log = LoggerFactory.getLogger(ZkSemaphoreTest.class);

    /** Deadline of every wait that should succeed; generous, since the machine is shared. */
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Session timeout of the test clients (the test server caps it at 20 ticks). */
    private static final Duration SESSION = Duration.ofSeconds(20);
    private static final String CONTAINER_INTERVAL = "znode.container.checkIntervalMs";

    private static final AtomicInteger PATHS = new AtomicInteger();

    private TestingServer server;
    /** Observes the server; takes no part in the tests. */
    private ZkClient admin;
    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private final List<ZkLease> leases = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
    private ExecutorService others;
    private String path;

    // ------------------------------------------------------------------ fixture

    /**
     * Starts the server with its container reaper slowed to once an hour (the property is read once, when the
     * server starts, and restored at once), so no directory of these tests disappears between two steps.
     */
    @BeforeAll
    void startServer() throws Exception {
        server = withContainerInterval(TimeUnit.HOURS.toMillis(1));
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION).build();
    }

    private static TestingServer withContainerInterval(long millis) throws Exception {
        String before = System.getProperty(CONTAINER_INTERVAL);
        System.setProperty(CONTAINER_INTERVAL, Long.toString(millis));
        try {
            return new TestingServer(true);
        } finally {
            if (before == null) {
                System.clearProperty(CONTAINER_INTERVAL);
            } else {
                System.setProperty(CONTAINER_INTERVAL, before);
            }
        }
    }

    @AfterAll
    void stopServer() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void freshPath(TestInfo info) {
        String method = info.getTestMethod().map(m -> m.getName()).orElse("test");
        path = "/semaphore-test/" + method + "-" + PATHS.incrementAndGet();
        others = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "semaphore-test-other");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (ZkLease l : leases) {
            l.release();
        }
        leases.clear();
        for (ZkClient c : clients) {
            c.close();
        }
        clients.clear();
        for (AutoCloseable c : closeables) {
            c.close();
        }
        closeables.clear();
        others.shutdownNow();
        others.awaitTermination(10, TimeUnit.SECONDS);
    }

    private ZkClient client() {
        return client(server.getConnectString());
    }

    private ZkClient client(String connectString) {
        ZkClient c = ZkClient.builder().connectString(connectString).sessionTimeout(SESSION).build();
        clients.add(c);
        return c;
    }

    /** A client whose connection goes through a proxy of its own, with a patient retry policy. */
    private ZkClient proxiedClient(ZkProxy proxy) {
        ZkClient c = FaultFixtures.client(proxy.connectString(), SESSION);
        clients.add(c);
        return c;
    }

    private ZkProxy proxy() {
        ZkProxy p = ZkProxy.to(server.getConnectString());
        closeables.add(p);
        return p;
    }

    /** Remembers a lease so that it is released after the test whatever happens. */
    private ZkLease kept(ZkLease lease) {
        leases.add(lease);
        return lease;
    }

    private List<String> nodes() {
        return nodes(admin, path);
    }

    private static List<String> nodes(ZkClient observer, String dir) {
        try {
            List<String> children = new ArrayList<>(observer.zooKeeper().getChildren(dir, false));
            Collections.sort(children);
            return children;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new AssertionError("cannot read the children of " + dir + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** The nodes under the path that are ephemerals of {@code sessionId}. */
    private List<String> nodesOf(long sessionId) {
        return FaultFixtures.nodesOf(admin.zooKeeper(), path, sessionId);
    }

    private static String name(ZkLease lease) {
        return lease.nodePath().substring(lease.nodePath().lastIndexOf('/') + 1);
    }

    private void awaitNodes(List<String> expected) {
        List<String> sorted = new ArrayList<>(expected);
        Collections.sort(sorted);
        Await.until(WAIT, () -> nodes().equals(sorted), () -> "expected nodes " + sorted + " under " + path
                + ", have " + nodes());
    }

    private void awaitNodeCount(int n) {
        Await.until(WAIT, () -> nodes().size() == n, () -> "expected " + n + " nodes under " + path + ", have " + nodes());
    }

    private void assertNoNodeLeft() {
        awaitNodes(List.of());
    }

    private String data(String nodePath) throws Exception {
        byte[] bytes = admin.zooKeeper().getData(nodePath, false, null);
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private Stat stat(String nodePath) throws Exception {
        return admin.zooKeeper().exists(nodePath, false);
    }

    /** What {@code f} failed with, waiting for it; fails the test if it succeeds or does not end in time. */
    private static Throwable failureOf(Future<?> f) {
        try {
            Object result = f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            return fail("expected a failure, got " + result);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (CancellationException e) {
            return e;
        } catch (TimeoutException e) {
            return fail("not done after " + WAIT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted");
        }
    }

    private static <T> T within(Future<T> f) throws Exception {
        return f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** Whether {@code text} names {@code n} as a number of its own (not as a digit of a longer number). */
    private static boolean namesNumber(String text, int n) {
        return text != null && Pattern.compile("(?<![0-9])" + n + "(?![0-9])").matcher(text).find();
    }

    // ------------------------------------------------------------------ a. at most N across clients

    /**
     * 12 clients (one session and one thread each) do 100 acquire/release cycles each on 3 permits: never more
     * than 3 holders at once (and at least 2 at some moment), every lease valid while held, each client's tokens
     * strictly increase, all 1200 cycles done, no node left.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twelveClientsNeverHoldMoreThanThreePermits() throws Exception {
        int clientCount = 12;
        int permits = 3;
        int cycles = 100;
        List<ZkSemaphore> semaphores = new ArrayList<>();
        for (int i = 0; i < clientCount; i++) {
            semaphores.add(new ZkSemaphore(client(), path, permits));
        }
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger maxHolders = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService workers = Executors.newFixedThreadPool(clientCount, r -> {
            Thread t = new Thread(r, "semaphore-test-worker");
            t.setDaemon(true);
            return t;
        });
        long start = System.nanoTime();
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int i = 0; i < clientCount; i++) {
                ZkSemaphore semaphore = semaphores.get(i);
                int who = i;
                results.add(workers.submit(() -> {
                    go.await();
                    long lastToken = Long.MIN_VALUE;
                    for (int cycle = 0; cycle < cycles; cycle++) {
                        ZkLease lease = semaphore.acquire();
                        try {
                            int now = holders.incrementAndGet();
                            maxHolders.accumulateAndGet(now, Math::max);
                            if (now > permits) {
                                problems.add("client " + who + " cycle " + cycle + ": " + now + " holders at once");
                            }
                            if (!lease.isValid()) {
                                problems.add("client " + who + " cycle " + cycle + ": lease not valid while held");
                            }
                            if (lease.fencingToken() <= lastToken) {
                                problems.add("client " + who + " cycle " + cycle + ": token " + lease.fencingToken()
                                        + " not above its previous " + lastToken);
                            }
                            lastToken = lease.fencingToken();
                            // The critical section's work: a short pause, so that holds can overlap.
                            Thread.yield();
                            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(500));
                        } finally {
                            holders.decrementAndGet();
                            lease.release();
                        }
                        done.incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> r : results) {
                r.get(100, TimeUnit.SECONDS); // rethrows whatever a worker threw
            }
        } finally {
            workers.shutdownNow();
        }
        log.info("{} clients x {} cycles on {} permits: max {} holders at once, {} ms", clientCount, cycles, permits,
                maxHolders.get(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        assertEquals(List.of(), List.copyOf(problems));
        assertTrue(maxHolders.get() <= permits, "max holders " + maxHolders.get());
        assertTrue(maxHolders.get() >= 2, "holds never overlapped (max " + maxHolders.get() + "): the run was serial");
        assertEquals(clientCount * cycles, done.get());
        assertEquals(0, holders.get());
        assertNoNodeLeft();
    }

    /**
     * 8 clients on 2 permits, each doing 60 cycles that wait in a random way (acquire, tryAcquire with a short
     * time, a one look, acquireAsync given up by cancel): never more than 2 holders, no waiter stranded by a
     * missed release (every thread finishes), and no node left by the abandoned acquisitions.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void mixedWaysOfWaitingAndGivingUpNeverStrandAWaiterNorExceedThePermits() throws Exception {
        int clientCount = 8;
        int permits = 2;
        int cycles = 60;
        long seed = System.nanoTime();
        log.info("mixed waits: seed {}", seed);
        List<ZkSemaphore> semaphores = new ArrayList<>();
        for (int i = 0; i < clientCount; i++) {
            semaphores.add(new ZkSemaphore(client(), path, permits));
        }
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger maxHolders = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger givenUp = new AtomicInteger();
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService workers = Executors.newFixedThreadPool(clientCount, r -> {
            Thread t = new Thread(r, "semaphore-test-mixed");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int i = 0; i < clientCount; i++) {
                ZkSemaphore semaphore = semaphores.get(i);
                Random random = new Random(seed + i);
                int who = i;
                results.add(workers.submit(() -> {
                    go.await();
                    for (int cycle = 0; cycle < cycles; cycle++) {
                        ZkLease lease = null;
                        switch (random.nextInt(4)) {
                            case 0 -> lease = semaphore.acquire();
                            case 1 -> lease = semaphore.tryAcquire(Duration.ofMillis(1 + random.nextInt(30))).orElse(null);
                            case 2 -> lease = semaphore.tryAcquire(Duration.ZERO).orElse(null);
                            default -> {
                                CompletableFuture<ZkLease> f = semaphore.acquireAsync();
                                try {
                                    lease = f.get(1 + random.nextInt(30), TimeUnit.MILLISECONDS);
                                } catch (TimeoutException e) {
                                    if (!f.cancel(true)) {
                                        lease = within(f); // granted at that instant: ours
                                    }
                                }
                            }
                        }
                        if (lease == null) {
                            givenUp.incrementAndGet();
                            continue;
                        }
                        try {
                            int now = holders.incrementAndGet();
                            maxHolders.accumulateAndGet(now, Math::max);
                            if (now > permits) {
                                problems.add("client " + who + " cycle " + cycle + ": " + now + " holders at once");
                            }
                            if (!lease.isValid()) {
                                problems.add("client " + who + " cycle " + cycle + ": lease not valid while held");
                            }
                            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(300)); // the work
                        } finally {
                            holders.decrementAndGet();
                            lease.release();
                        }
                        grants.incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> r : results) {
                r.get(100, TimeUnit.SECONDS); // a waiter stranded by a missed release never finishes
            }
        } finally {
            workers.shutdownNow();
        }
        log.info("mixed waits (seed {}): {} grants, {} given up, max {} holders", seed, grants.get(), givenUp.get(),
                maxHolders.get());
        assertEquals(List.of(), List.copyOf(problems), "seed " + seed);
        assertEquals(clientCount * cycles, grants.get() + givenUp.get());
        assertTrue(grants.get() > 0);
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ b. FIFO

    /**
     * Two permits held, six waiters queued one by one (acquireAsync on three clients): each release grants exactly
     * the next waiter, in arrival order, with the node it queued; the later ones stay pending; nothing is left.
     */
    @Test
    void waitersAreGrantedExactlyInArrivalOrder() throws Exception {
        List<ZkSemaphore> semaphores = List.of(new ZkSemaphore(client(), path, 2), new ZkSemaphore(client(), path, 2),
                new ZkSemaphore(client(), path, 2));
        List<ZkLease> granted = new ArrayList<>();
        granted.add(kept(semaphores.get(0).acquire()));
        granted.add(kept(semaphores.get(1).acquire()));
        awaitNodeCount(2);

        int waiterCount = 6;
        List<CompletableFuture<ZkLease>> waiters = new ArrayList<>();
        List<String> queuedNodes = new ArrayList<>();
        List<Integer> completionOrder = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < waiterCount; i++) {
            List<String> before = nodes();
            CompletableFuture<ZkLease> f = semaphores.get((i + 2) % semaphores.size()).acquireAsync();
            int index = i;
            f.thenAccept(l -> completionOrder.add(index));
            waiters.add(f);
            awaitNodeCount(3 + i);
            List<String> added = new ArrayList<>(nodes());
            added.removeAll(before);
            assertEquals(1, added.size(), "one new node per waiter: " + added);
            queuedNodes.add(added.get(0));
            assertFalse(f.isDone(), "waiter " + i + " was granted beside two holders");
        }
        // Arrival order is queue order: each waiter's node has a higher sequence than the one before.
        for (int i = 1; i < waiterCount; i++) {
            assertTrue(queuedNodes.get(i).substring(queuedNodes.get(i).length() - 10)
                    .compareTo(queuedNodes.get(i - 1).substring(queuedNodes.get(i - 1).length() - 10)) > 0,
                    "sequence order of " + queuedNodes);
        }

        for (int k = 0; k < waiterCount; k++) {
            granted.get(k).release(); // the holders first, then the waiters in the order they were granted
            ZkLease next = kept(within(waiters.get(k)));
            assertTrue(next.isValid());
            assertEquals(queuedNodes.get(k), name(next), "waiter " + k + " holds with the node it queued");
            for (int later = k + 1; later < waiterCount; later++) {
                assertFalse(waiters.get(later).isDone(), "release " + k + " also granted waiter " + later);
            }
            granted.add(next);
            long valid = granted.stream().filter(ZkLease::isValid).count();
            assertEquals(2, valid, "valid leases after release " + k);
            awaitNodeCount(2 + waiterCount - k - 1);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5), List.copyOf(completionOrder));
        for (ZkLease l : granted) {
            l.release();
        }
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ c. no overtaking

    /**
     * A later arrival never overtakes an earlier waiter, even when it would fit: with 2 permits a freed permit
     * goes to the queued waiter; with 3 permits, a waiter queued and one holder released, a one-look
     * tryAcquire(ZERO) of another client called at once is empty, the waiter gets the permit, no extra node.
     */
    @Test
    void aLaterArrivalNeverOvertakesAnEarlierWaiter() throws Exception {
        // Two permits: H1 and H2 hold, W1 waits; H1 leaves and W1 holds beside H2.
        ZkSemaphore s1 = new ZkSemaphore(client(), path, 2);
        ZkSemaphore s2 = new ZkSemaphore(client(), path, 2);
        ZkLease h1 = kept(s1.acquire());
        ZkLease h2 = kept(s2.acquire());
        CompletableFuture<ZkLease> w1 = s2.acquireAsync();
        awaitNodeCount(3);
        assertFalse(w1.isDone());
        h1.release();
        ZkLease w1Lease = kept(within(w1));
        assertTrue(w1Lease.isValid() && h2.isValid(), "two valid leases: H2 and W1");
        awaitNodes(List.of(name(h2), name(w1Lease)));
        h2.release();
        w1Lease.release();
        assertNoNodeLeft();

        // Three permits: A, B, C hold, W waits; A leaves, and X, arriving just after, must not take A's permit.
        String three = path + "-three";
        ZkSemaphore sa = new ZkSemaphore(client(), three, 3);
        ZkSemaphore sb = new ZkSemaphore(client(), three, 3);
        ZkSemaphore sw = new ZkSemaphore(client(), three, 3);
        ZkClient xClient = client();
        ZkSemaphore sx = new ZkSemaphore(xClient, three, 3);
        ZkLease a = kept(sa.acquire());
        ZkLease b = kept(sb.acquire());
        ZkLease c = kept(sa.acquire());
        sx.tryAcquire(Duration.ZERO).ifPresent(l -> fail("a fourth lease beside three: " + l)); // count checked now
        CompletableFuture<ZkLease> w = sw.acquireAsync();
        Await.until(WAIT, () -> nodes(admin, three).size() == 4, () -> "W queued: " + nodes(admin, three));
        assertFalse(w.isDone());

        a.release();
        Optional<ZkLease> x = sx.tryAcquire(Duration.ZERO);
        x.ifPresent(this::kept);
        assertEquals(Optional.empty(), x, "X overtook the waiter W");
        ZkLease wLease = kept(within(w));
        assertTrue(wLease.isValid());
        List<String> expected = new ArrayList<>(List.of(name(b), name(c), name(wLease)));
        Collections.sort(expected);
        Await.until(WAIT, () -> nodes(admin, three).equals(expected),
                () -> "expected B, C and W only, have " + nodes(admin, three));
        assertEquals(List.of(), FaultFixtures.nodesOf(admin.zooKeeper(), three, xClient.sessionId()),
                "X left a node");
        assertEquals(Optional.empty(), sx.tryAcquire(Duration.ofMillis(200)), "three are valid: B, C, W");
        b.release();
        c.release();
        wLease.release();
        Await.until(WAIT, () -> nodes(admin, three).isEmpty(), () -> "left: " + nodes(admin, three));
    }

    /**
     * The waiter's node keeps its place even before the waiter hears of the release: with W's connection stalled,
     * A's release gives X nothing (neither one look nor 300 ms); after the heal W holds and X left no node.
     */
    @Test
    void aWaiterThatHasNotHeardOfTheReleaseYetIsStillNotOvertaken() throws Exception {
        ZkProxy proxy = proxy();
        ZkSemaphore sa = new ZkSemaphore(client(), path, 3);
        ZkSemaphore sw = new ZkSemaphore(proxiedClient(proxy), path, 3);
        ZkClient xClient = client();
        ZkSemaphore sx = new ZkSemaphore(xClient, path, 3);
        ZkLease a = kept(sa.acquire());
        ZkLease b = kept(sa.acquire());
        ZkLease c = kept(sa.acquire());
        CompletableFuture<ZkLease> w = sw.acquireAsync();
        awaitNodeCount(4);
        assertEquals(Optional.empty(), sx.tryAcquire(Duration.ZERO), "full: three hold, W waits");

        proxy.stall();
        try {
            a.release();
            awaitNodeCount(3);
            assertEquals(Optional.empty(), sx.tryAcquire(Duration.ZERO), "X took the permit W is first in line for");
            assertEquals(Optional.empty(), sx.tryAcquire(Duration.ofMillis(300)), "X took W's permit within 300 ms");
            assertFalse(w.isDone(), "W cannot have heard of the release through a stalled connection");
        } finally {
            proxy.heal();
        }
        ZkLease wLease = kept(within(w));
        assertTrue(wLease.isValid());
        awaitNodes(List.of(name(b), name(c), name(wLease)));
        assertEquals(List.of(), nodesOf(xClient.sessionId()));
        b.release();
        c.release();
        wLease.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ d. the recorded permit count

    /**
     * After a 3-permit semaphore recorded its count, a 5-permit one on the same path fails acquire(),
     * tryAcquire(ZERO), tryAcquire(1 s) and acquireAsync() with IllegalStateException naming 3 and 5, makes no
     * node, and leaves the record "permits=3"; the 3-permit semaphore still works.
     */
    @Test
    void anotherPermitCountOnTheSamePathFailsWithoutANode() throws Exception {
        String dir = "/semaphore-test/count-mismatch"; // no digits: the message's 3 and 5 are the counts
        ZkSemaphore three = new ZkSemaphore(client(), dir, 3);
        // A lease kept: the record exists while the directory does (the last release removes both).
        ZkLease keeper = kept(three.acquire());
        assertEquals("permits=3", data(dir));
        List<String> before = nodes(admin, dir);

        ZkSemaphore five = new ZkSemaphore(client(), dir, 5);
        List<Executable> attempts = List.of(five::acquire, () -> five.tryAcquire(Duration.ZERO),
                () -> five.tryAcquire(Duration.ofSeconds(1)));
        for (Executable attempt : attempts) {
            IllegalStateException e = assertThrows(IllegalStateException.class, attempt);
            assertTrue(namesNumber(e.getMessage(), 3) && namesNumber(e.getMessage(), 5), e.getMessage());
            assertEquals(before, nodes(admin, dir));
        }
        Throwable async = failureOf(five.acquireAsync());
        assertInstanceOf(IllegalStateException.class, async);
        assertTrue(namesNumber(async.getMessage(), 3) && namesNumber(async.getMessage(), 5), async.getMessage());
        assertEquals(before, nodes(admin, dir), "a mismatched acquisition made a node");
        assertEquals("permits=3", data(dir), "the recorded count changed");

        // The recorded count still rules: three leases at once, not a fourth.
        List<ZkLease> held = new ArrayList<>(List.of(keeper));
        for (int i = 0; i < 2; i++) {
            held.add(kept(three.acquire()));
        }
        assertEquals(Optional.empty(), three.tryAcquire(Duration.ZERO));
        held.forEach(ZkLease::release);
        Await.until(WAIT, () -> nodes(admin, dir).isEmpty(), () -> "left: " + nodes(admin, dir));
    }

    /**
     * The recorded count binds every semaphore object, also one that checked it before the directory was reaped:
     * a 3-permit object that acquired once, after the empty directory was removed by the server and re-created by
     * a 5-permit object (recording 5), must fail with IllegalStateException naming 3 and 5, not queue with its own
     * count beside the 5-permit ones. Runs on a server of its own whose container reaper runs every 100 ms.
     */
    @Test
    void aCountCheckedBeforeTheDirectoryWasReapedIsCheckedAgain() throws Exception {
        try (TestingServer reaping = withContainerInterval(100);
             ZkClient observer = ZkClient.builder().connectString(reaping.getConnectString()).build();
             ZkClient threeClient = ZkClient.builder().connectString(reaping.getConnectString()).build();
             ZkClient fiveClient = ZkClient.builder().connectString(reaping.getConnectString()).build()) {
            String dir = "/semaphore-test/reaped";
            ZkSemaphore three = new ZkSemaphore(threeClient, dir, 3);
            three.acquire().release(); // checks and records "permits=3"
            Await.until(WAIT, () -> exists(observer, dir) == null, "the server reaps the emptied directory");

            ZkSemaphore five = new ZkSemaphore(fiveClient, dir, 5);
            ZkLease fiveLease = five.acquire(); // re-creates the directory, recording 5
            assertEquals("permits=5",
                    new String(observer.zooKeeper().getData(dir, false, null), StandardCharsets.UTF_8));

            Optional<ZkLease> stale;
            try {
                stale = three.tryAcquire(Duration.ZERO);
            } catch (IllegalStateException expected) {
                assertTrue(namesNumber(expected.getMessage(), 3) && namesNumber(expected.getMessage(), 5),
                        expected.getMessage());
                assertEquals(List.of(name(fiveLease)), nodes(observer, dir));
                fiveLease.release();
                return;
            }
            // What happens instead: the 3-permit object queues under its own count beside the 5-permit ones.
            List<ZkLease> fives = new ArrayList<>(List.of(fiveLease));
            for (int i = 0; i < 3; i++) {
                five.tryAcquire(Duration.ZERO).ifPresent(fives::add);
            }
            long valid = fives.stream().filter(ZkLease::isValid).count() + (stale.isPresent() ? 1 : 0);
            fail("a ZkSemaphore built with 3 permits acquired on " + dir + " whose recorded count is 5 (it checked"
                    + " the count once, before the directory was reaped): tryAcquire(ZERO) returned " + stale
                    + " instead of throwing IllegalStateException; the path now has " + valid
                    + " valid leases at once, more than the 3 that object promises; nodes " + nodes(observer, dir));
        }
    }

    private static Stat exists(ZkClient observer, String nodePath) {
        try {
            return observer.zooKeeper().exists(nodePath, false);
        } catch (KeeperException e) {
            throw new AssertionError("cannot read " + nodePath + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    // ------------------------------------------------------------------ e. bad input

    /**
     * Every invalid argument throws IllegalArgumentException: a null client, permits 0, -1 and MIN_VALUE, a null,
     * empty, relative, trailing-slash, double-slash or /zookeeper path, a path ZooKeeper rejects, tryAcquire(null);
     * nothing is created.
     */
    @Test
    void everyInvalidArgumentIsRefused() throws Exception {
        ZkClient c = client();
        assertThrows(IllegalArgumentException.class, () -> new ZkSemaphore(null, path, 1));
        for (int permits : new int[] {0, -1, Integer.MIN_VALUE}) {
            assertThrows(IllegalArgumentException.class, () -> new ZkSemaphore(c, path, permits), "permits " + permits);
        }
        List<String> badPaths = new ArrayList<>(List.of("", "relative", "semaphores/x", "/", "/semaphores/x/",
                "/semaphores//x", "//x", "/zookeeper", "/zookeeper/x", "/zookeeper/quota/x", "/x/./y", "/x/../y",
                "/x/\u0000y"));
        badPaths.add(null);
        for (String bad : badPaths) {
            assertThrows(IllegalArgumentException.class, () -> new ZkSemaphore(c, bad, 1), "path '" + bad + "'");
        }
        ZkSemaphore ok = new ZkSemaphore(c, path, 2);
        assertEquals(2, ok.permits());
        assertEquals(path, ok.path());
        assertThrows(IllegalArgumentException.class, () -> ok.tryAcquire(null));
        assertNull(stat(path), "a refused argument created the directory");
        assertEquals(List.of(), nodes());
    }

    // ------------------------------------------------------------------ f. session expiry

    /**
     * One permit: the holder's session expires on the server; the waiter of another client gets the permit, the
     * old lease reports the loss (whenLost() completes, isValid() false), release() on it throws nothing, the
     * expired client acquires again in its new session, and nothing is left.
     */
    @Test
    void anExpiredHolderFreesItsPermitAndItsLeaseReportsTheLoss() throws Exception {
        ZkClient doomed = client();
        ZkSemaphore holderSide = new ZkSemaphore(doomed, path, 1);
        ZkSemaphore waiterSide = new ZkSemaphore(client(), path, 1);
        ZkLease held = kept(holderSide.acquire());
        CompletableFuture<ZkLease> waiting = waiterSide.acquireAsync();
        awaitNodeCount(2);
        assertFalse(waiting.isDone());
        long oldSession = doomed.sessionId();

        SessionExpiry.expireOnServer(doomed.zooKeeper(), server.getConnectString(), WAIT);
        ZkLease taken = kept(within(waiting));
        assertTrue(taken.isValid());
        within(held.whenLost());
        assertFalse(held.isValid(), "a lost lease is not valid");
        held.release(); // nothing thrown
        held.close();
        awaitNodes(List.of(name(taken)));

        Await.until(WAIT, () -> doomed.state() == ConnectionState.RECONNECTED && doomed.sessionId() != oldSession,
                () -> "a new session after 0x" + Long.toHexString(oldSession) + "; now " + doomed);
        CompletableFuture<ZkLease> again = holderSide.acquireAsync();
        awaitNodeCount(2);
        assertFalse(again.isDone(), "one permit, and the waiter holds it");
        taken.release();
        ZkLease second = kept(within(again));
        assertEquals(doomed.sessionId(), stat(second.nodePath()).getEphemeralOwner(), "granted in the new session");
        second.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ g. interrupt, timeout, cancel

    /**
     * Not getting a lease leaves no node: an interrupted acquire() throws InterruptedException (status cleared)
     * and its node goes; tryAcquire(300 ms) behind a holder is empty with no node left; a cancelled
     * acquireAsync() deletes its node and is never granted after the holder leaves.
     */
    @Test
    void interruptTimeoutAndCancelLeaveNoNode() throws Exception {
        ZkLease holder = kept(new ZkSemaphore(client(), path, 1).acquire());
        ZkClient waiterClient = client();
        ZkSemaphore waiterSide = new ZkSemaphore(waiterClient, path, 1);
        long waiterSession = waiterClient.sessionId();

        // Interrupt while waiting in acquire() on another thread.
        CompletableFuture<Boolean> statusAfter = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                ZkLease l = waiterSide.acquire();
                l.release();
                statusAfter.completeExceptionally(new AssertionError("acquired beside the holder: " + l));
            } catch (InterruptedException e) {
                statusAfter.complete(Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                statusAfter.completeExceptionally(t);
            }
        }, "semaphore-test-waiter");
        waiter.setDaemon(true);
        waiter.start();
        awaitNodeCount(2);
        assertEquals(1, nodesOf(waiterSession).size());
        waiter.interrupt();
        assertFalse(within(statusAfter), "InterruptedException thrown, status cleared");
        awaitNodes(List.of(name(holder)));

        // A timeout.
        assertEquals(Optional.empty(), waiterSide.tryAcquire(Duration.ofMillis(300)));
        awaitNodes(List.of(name(holder)));
        assertEquals(List.of(), nodesOf(waiterSession));

        // A cancelled future.
        CompletableFuture<ZkLease> pending = waiterSide.acquireAsync();
        awaitNodeCount(2);
        assertTrue(pending.cancel(true));
        awaitNodes(List.of(name(holder)));
        holder.release();
        assertNoNodeLeft();
        // The one bounded observation: nothing is granted to the cancelled acquisition once the permit is free.
        Await.holds("no node appears after the acquisition was cancelled", Duration.ofMillis(500),
                () -> nodes().isEmpty());
        assertTrue(pending.isCancelled());
        // The permit is free for anyone.
        ZkLease after = kept(waiterSide.tryAcquire(Duration.ZERO).orElseThrow(() -> new AssertionError("permit not free")));
        after.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ h. closed client

    /**
     * On a closed client acquire(), tryAcquire() and acquireAsync() fail with IllegalStateException; a pending
     * acquireAsync() fails with it when its client closes, and its node goes with the session.
     */
    @Test
    void aClosedClientFailsItsAcquisitions() throws Exception {
        ZkClient closed = client();
        ZkSemaphore made = new ZkSemaphore(closed, path, 1);
        closed.close();
        ZkSemaphore late = new ZkSemaphore(closed, path, 1);
        for (ZkSemaphore s : List.of(made, late)) {
            assertThrows(IllegalStateException.class, s::acquire);
            assertThrows(IllegalStateException.class, () -> s.tryAcquire(Duration.ZERO));
            assertThrows(IllegalStateException.class, () -> s.tryAcquire(Duration.ofSeconds(1)));
            assertInstanceOf(IllegalStateException.class, failureOf(s.acquireAsync()));
        }
        assertEquals(List.of(), nodes());

        ZkLease holder = kept(new ZkSemaphore(client(), path, 1).acquire());
        ZkClient closing = client();
        CompletableFuture<ZkLease> pending = new ZkSemaphore(closing, path, 1).acquireAsync();
        awaitNodeCount(2);
        assertFalse(pending.isDone());
        closing.close();
        assertInstanceOf(IllegalStateException.class, failureOf(pending));
        awaitNodes(List.of(name(holder)));
        assertTrue(holder.isValid());
        holder.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ i. a create whose reply was lost

    /**
     * Two permits, the directory otherwise empty: the connection of client A is cut right after its lease node's
     * create reached the server. A's acquire() still succeeds exactly once, in the same session, with the node the
     * server made, and A never has more nodes than live acquisitions; B fills the other permit; C, queued behind
     * them, gets A's permit after A releases, and nothing is left.
     */
    @Test
    void aLostCreateReplyIsAdoptedWhenThePermitIsFree() throws Exception {
        ZkProxy proxy = proxy();
        ZkClient a = proxiedClient(proxy);
        ZkSemaphore sa = new ZkSemaphore(a, path, 2);
        sa.acquire().release(); // the directory and its count exist, and sa has checked it: the next create is the node's
        assertNoNodeLeft();
        long session = a.sessionId();

        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        Future<ZkLease> acquiring = others.submit(sa::acquire);
        int[] mostNodesOfA = {0};
        Await.until(WAIT, () -> {
            mostNodesOfA[0] = Math.max(mostNodesOfA[0], nodesOf(session).size());
            return acquiring.isDone();
        }, "A acquires despite the lost reply");
        ZkLease lease = kept(within(acquiring));
        within(cut);
        assertEquals(session, a.sessionId(), "same session: the node the server made is still A's");
        assertTrue(mostNodesOfA[0] <= 1, "A had " + mostNodesOfA[0] + " nodes for one acquisition");
        assertTrue(proxy.connectionsAccepted() >= 2, "the connection was cut and made again");
        assertEquals(List.of(name(lease)), nodesOf(session), "exactly one node of A, the lease's");
        assertEquals(stat(lease.nodePath()).getCzxid(), lease.fencingToken());
        assertTrue(lease.isValid());

        ZkLease b = kept(new ZkSemaphore(client(), path, 2).tryAcquire(Duration.ZERO)
                .orElseThrow(() -> new AssertionError("B cannot fill the second permit: " + nodes())));
        ZkSemaphore sc = new ZkSemaphore(client(), path, 2);
        assertEquals(Optional.empty(), sc.tryAcquire(Duration.ZERO), "a third lease beside A and B");
        CompletableFuture<ZkLease> c = sc.acquireAsync();
        awaitNodeCount(3);
        assertFalse(c.isDone());

        lease.release();
        ZkLease cLease = kept(within(c));
        assertTrue(cLease.isValid(), "C waits for no ghost of A");
        assertEquals(List.of(), nodesOf(session), "A's node is gone after its release");
        awaitNodes(List.of(name(b), name(cLease)));
        b.release();
        cLease.release();
        assertNoNodeLeft();
    }

    /**
     * The same lost create reply while both permits are held: A's node waits in line (one node, never two), and
     * when a holder leaves A holds with the node the server made; nothing is left after the releases.
     */
    @Test
    void aLostCreateReplyOfAWaiterIsAdoptedAndWaitsInLine() throws Exception {
        ZkProxy proxy = proxy();
        ZkClient a = proxiedClient(proxy);
        ZkSemaphore sa = new ZkSemaphore(a, path, 2);
        sa.acquire().release();
        long session = a.sessionId();
        ZkSemaphore holders = new ZkSemaphore(client(), path, 2);
        ZkLease h1 = kept(holders.acquire());
        ZkLease h2 = kept(holders.acquire());

        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        CompletableFuture<ZkLease> pending = sa.acquireAsync();
        within(cut);
        int[] mostNodesOfA = {0};
        Await.until(WAIT, () -> {
            mostNodesOfA[0] = Math.max(mostNodesOfA[0], nodesOf(session).size());
            return mostNodesOfA[0] >= 1;
        }, () -> "the cut create made A's node: " + nodes());
        String made = nodesOf(session).get(0);
        assertFalse(pending.isDone(), "two permits are held");

        h1.release();
        Await.until(WAIT, () -> {
            mostNodesOfA[0] = Math.max(mostNodesOfA[0], nodesOf(session).size());
            return pending.isDone();
        }, "A holds once H1 leaves");
        ZkLease lease = kept(within(pending));
        assertEquals(session, a.sessionId());
        assertTrue(mostNodesOfA[0] <= 1, "A had " + mostNodesOfA[0] + " nodes for one acquisition");
        assertEquals(made, name(lease), "A holds with the node its lost create made");
        assertEquals(List.of(made), nodesOf(session));
        awaitNodes(List.of(name(h2), made));
        lease.release();
        h2.release();
        assertNoNodeLeft();
    }

    /**
     * The lost create reply during a one-look tryAcquire(ZERO) that cannot hold (both permits held): it is empty,
     * and the node the server made is found and deleted; once a permit is free A acquires at once.
     */
    @Test
    void aLostCreateReplyOfAOneLookThatDoesNotHoldLeavesNoNode() throws Exception {
        ZkProxy proxy = proxy();
        ZkClient a = proxiedClient(proxy);
        ZkSemaphore sa = new ZkSemaphore(a, path, 2);
        sa.acquire().release();
        long session = a.sessionId();
        ZkSemaphore holders = new ZkSemaphore(client(), path, 2);
        ZkLease h1 = kept(holders.acquire());
        ZkLease h2 = kept(holders.acquire());
        // A looks once, so that it knows the directory (made again by the holders after A's release
        // removed it): the cut create below is the lease node's own, not the transaction making it.
        assertEquals(Optional.empty(), sa.tryAcquire(Duration.ZERO));
        Await.until(WAIT, () -> nodesOf(session).isEmpty(), () -> "the look's node goes: " + nodes());

        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        Optional<ZkLease> look = sa.tryAcquire(Duration.ZERO);
        look.ifPresent(this::kept);
        assertEquals(Optional.empty(), look, "a third lease beside two holders");
        within(cut);
        Await.until(WAIT, () -> nodesOf(session).isEmpty() && nodes().size() == 2,
                () -> "the node of the abandoned create goes: " + nodes());
        assertEquals(session, a.sessionId());
        h1.release();
        ZkLease lease = kept(sa.tryAcquire(Duration.ZERO)
                .orElseThrow(() -> new AssertionError("A cannot take the free permit: " + nodes())));
        assertEquals(List.of(name(lease)), nodesOf(session));
        lease.release();
        h2.release();
        assertNoNodeLeft();
    }

    /** Lease nodes are named sem-<32 hex>-<10 digits>, and the directory records "permits=2" as its data. */
    @Test
    void nodeNamesFollowTheDocumentedForm() throws Exception {
        ZkSemaphore s = new ZkSemaphore(client(), path, 2);
        ZkLease first = kept(s.acquire());
        ZkLease second = kept(s.acquire());
        assertNotNull(first);
        for (String n : nodes()) {
            assertTrue(n.matches("sem-[0-9a-f]{32}-[0-9]{10}"), n);
        }
        assertEquals("permits=2", data(path));
        first.release();
        second.release();
        assertNoNodeLeft();
    }
}
