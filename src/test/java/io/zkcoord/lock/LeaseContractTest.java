package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ZkLease} contract of every {@link ZkLock} ({@code acquire()}, {@code tryAcquire(Duration)},
 * {@code acquireAsync()}), run against each {@link Kind} of lock: {@link ZkMutex} and both sides of {@link
 * ZkReadWriteLock}. A read lease shares with other reads, so the tests of exclusion among one kind run for the
 * mutex and the write side only; for the read side the excluding partner is the write side.
 *
 * <p>One real {@link TestingServer} per class, a fresh lock path per test, no mocks. Every wait is on a
 * condition with a deadline ({@link Await}, {@code Future.get(timeout)}); the one bounded observation ("no node
 * appears for 500 ms") is said so where it is used.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LeaseContractTest {

    private static final Logger log = LoggerFactory.getLogger(LeaseContractTest.class);

    /** Deadline of every wait that should succeed; generous, since the machine is shared. */
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Session timeout of the test clients (the test server caps it at 20 s). */
    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(20);
    /** The short waits the contract names: a tryAcquire or tryLock that must come back empty. */
    private static final Duration SHORT = Duration.ofMillis(200);

    private static final AtomicInteger PATHS = new AtomicInteger();

    /** The kinds of lock under test. */
    enum Kind {
        MUTEX(true) {
            @Override
            ZkLock newLock(ZkClient client, String path) {
                return new ZkMutex(client, path);
            }

            @Override
            ZkLock newBlocker(ZkClient client, String path) {
                return new ZkMutex(client, path);
            }

            @Override
            LockPair pairOnOneObject(ZkClient client, String path) {
                ZkMutex m = new ZkMutex(client, path);
                return new LockPair(m, m);
            }
        },
        READ(false) {
            @Override
            ZkLock newLock(ZkClient client, String path) {
                return new ZkReadWriteLock(client, path).readLock();
            }

            @Override
            ZkLock newBlocker(ZkClient client, String path) {
                return new ZkReadWriteLock(client, path).writeLock();
            }

            @Override
            LockPair pairOnOneObject(ZkClient client, String path) {
                ZkReadWriteLock rw = new ZkReadWriteLock(client, path);
                return new LockPair(rw.readLock(), rw.writeLock());
            }
        },
        WRITE(true) {
            @Override
            ZkLock newLock(ZkClient client, String path) {
                return new ZkReadWriteLock(client, path).writeLock();
            }

            @Override
            ZkLock newBlocker(ZkClient client, String path) {
                return new ZkReadWriteLock(client, path).writeLock();
            }

            @Override
            LockPair pairOnOneObject(ZkClient client, String path) {
                ZkLock w = new ZkReadWriteLock(client, path).writeLock();
                return new LockPair(w, w);
            }
        };

        private final boolean exclusive;

        Kind(boolean exclusive) {
            this.exclusive = exclusive;
        }

        /** True if two holders of this kind exclude each other (mutex, write). */
        boolean exclusive() {
            return exclusive;
        }

        /** A new lock of this kind. */
        abstract ZkLock newLock(ZkClient client, String path);

        /** A new lock that excludes a lock of this kind: the same kind, or the write side for a read. */
        abstract ZkLock newBlocker(ZkClient client, String path);

        /**
         * The lock of this kind and a lock that excludes it, made from <em>one</em> object: the same mutex or
         * write side twice, or the read and the write side of one read/write lock.
         */
        abstract LockPair pairOnOneObject(ZkClient client, String path);
    }

    /** A lock, and a lock made from the same object that excludes it. */
    record LockPair(ZkLock lock, ZkLock excluding) {
    }

    private TestingServer server;
    /** Observes the server; takes no part in the tests. */
    private ZkClient admin;
    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private final List<ZkLease> leases = new CopyOnWriteArrayList<>();
    private ExecutorService others;
    private String path;

    // ------------------------------------------------------------------ fixture

    @BeforeAll
    void startServer() throws Exception {
        server = new TestingServer(true);
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
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
        path = "/lease-contract/" + method + "-" + PATHS.incrementAndGet();
        others = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "lease-test-other");
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
        others.shutdownNow();
        others.awaitTermination(10, TimeUnit.SECONDS);
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
        clients.add(c);
        return c;
    }

    /** Remembers a lease so that it is released after the test whatever happens. */
    private ZkLease kept(ZkLease lease) {
        leases.add(lease);
        return lease;
    }

    /** A blocker of {@code kind} held as a lease by a client of its own. */
    private ZkLease holdBlocker(Kind kind) throws InterruptedException {
        return kept(kind.newBlocker(client(), path).acquire());
    }

    private List<String> nodes() {
        List<String> children = new ArrayList<>(LockQueue.children(admin, path));
        Collections.sort(children);
        return children;
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

    /**
     * The one bounded observation of these tests: the directory stays empty for {@code window}, polled every
     * 10 ms. Used only where the claim is that nothing happens (an abandoned acquisition is never granted).
     */
    private void assertStaysEmptyFor(Duration window) {
        Await.holds("no node appears under " + path + " after the acquisition was abandoned", window,
                () -> nodes().isEmpty());
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

    /** Waits until {@code c} has lost its session {@code oldId} and built a new one (state RECONNECTED). */
    private static void awaitNewSession(ZkClient c, long oldId) {
        Await.until(WAIT, () -> c.state() == ConnectionState.RECONNECTED && c.sessionId() != oldId,
                () -> "a new session after 0x" + Long.toHexString(oldId) + "; now " + c);
    }

    // ------------------------------------------------------------------ acquire and release

    /**
     * acquire() gives a valid lease whose node exists under the lock path, belongs to the client's session and
     * has the token as czxid; release() from another thread deletes it and the lease turns invalid.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void acquireGivesALeaseOnItsNodeAndReleaseFromAnotherThreadDeletesIt(Kind kind) throws Exception {
        ZkClient c = client();
        ZkLock lock = kind.newLock(c, path);
        ZkLease lease = kept(lock.acquire());
        assertTrue(lease.isValid());
        assertTrue(lease.nodePath().startsWith(path + "/"), "node " + lease.nodePath() + " under " + path);
        assertEquals(List.of(name(lease)), nodes(), "the lease's node is the only one on the server");
        Stat stat = stat(lease.nodePath());
        assertNotNull(stat, "the node exists on the server");
        assertEquals(stat.getCzxid(), lease.fencingToken(), "the token is the node's czxid");
        assertEquals(c.sessionId(), stat.getEphemeralOwner(), "the node is an ephemeral of the client's session");
        assertFalse(lease.whenLost().isDone());
        assertFalse(lock.isHeldByCurrentThread(), "a lease is not a hold of the acquiring thread");

        within(others.submit(lease::release));
        assertFalse(lease.isValid(), "invalid once release() has returned, on any thread");
        assertNoNodeLeft();
        assertEquals(stat.getCzxid(), lease.fencingToken(), "the token stays readable after release");
        assertFalse(lease.whenLost().isDone(), "a released lease is never lost");
    }

    /** release() and close(), called many times from 8 threads at once, throw nothing and leave no node. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void releaseIsIdempotentFromManyThreadsAtOnce(Kind kind) throws Exception {
        ZkLease lease = kept(kind.newLock(client(), path).acquire());
        assertEquals(1, nodes().size());
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> releasers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            releasers.add(others.submit(() -> {
                go.await();
                for (int j = 0; j < 3; j++) {
                    lease.release();
                    lease.close();
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> r : releasers) {
            within(r); // rethrows whatever a release threw
        }
        lease.release();
        lease.close();
        assertFalse(lease.isValid());
        assertNoNodeLeft();
        assertFalse(lease.whenLost().isDone());
    }

    // ------------------------------------------------------------------ not reentrant; leases and holds

    /**
     * Not reentrant: with a lease held, tryAcquire(200 ms) by the same thread on the same object is empty for an
     * exclusive kind and leaves no extra node; a read gets a second, distinct lease (reads share).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aSecondAcquireOnTheSameObjectQueuesLikeAnyOther(Kind kind) throws Exception {
        ZkLock lock = kind.newLock(client(), path);
        ZkLease first = kept(lock.acquire());
        Optional<ZkLease> second = lock.tryAcquire(SHORT);
        if (kind.exclusive()) {
            assertTrue(second.isEmpty(), "a second lease beside the first: " + second);
            awaitNodes(List.of(name(first)));
            assertTrue(first.isValid());
            first.release();
            assertNoNodeLeft();
        } else {
            assertTrue(second.isPresent(), "a read lease shares with a read lease of the same object");
            ZkLease other = kept(second.get());
            assertNotEquals(first.nodePath(), other.nodePath(), "a second lease has a node of its own");
            assertTrue(other.fencingToken() > first.fencingToken());
            awaitNodes(List.of(name(first), name(other)));
            first.release();
            assertTrue(other.isValid(), "releasing one lease leaves the other");
            awaitNodes(List.of(name(other)));
            other.release();
            assertNoNodeLeft();
        }
    }

    /**
     * A lease and a thread's hold of one object exclude each other as two processes do (read lease against the
     * write side of the same read/write lock), and fencing tokens strictly increase lease, hold, lease.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aLeaseAndAThreadHoldOfOneObjectExcludeEachOther(Kind kind) throws Exception {
        LockPair pair = kind.pairOnOneObject(client(), path);
        ZkLock leased = pair.lock();
        ZkLock held = pair.excluding();

        ZkLease first = kept(leased.acquire());
        assertFalse(held.tryLock(SHORT.toMillis(), TimeUnit.MILLISECONDS), "a thread hold beside a lease");
        assertFalse(held.isHeldByCurrentThread());
        assertFalse(within(others.submit(() -> held.tryLock(SHORT.toMillis(), TimeUnit.MILLISECONDS))),
                "another thread's hold beside a lease");
        awaitNodes(List.of(name(first)));
        long leaseToken = first.fencingToken();
        first.release();

        held.lock();
        long holdToken;
        try {
            holdToken = held.fencingToken();
            assertTrue(leased.tryAcquire(SHORT).isEmpty(), "a lease beside the thread's own hold");
            assertTrue(within(others.submit(() -> leased.tryAcquire(SHORT))).isEmpty(),
                    "a lease taken by another thread beside a hold");
            awaitNodeCount(1); // only the hold's node: the empty tries left none
        } finally {
            held.unlock();
        }
        assertNoNodeLeft();

        ZkLease again = kept(leased.acquire());
        assertTrue(again.isValid());
        assertTrue(leaseToken < holdToken && holdToken < again.fencingToken(),
                "tokens lease " + leaseToken + ", hold " + holdToken + ", lease " + again.fencingToken());
        again.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ tryAcquire

    /**
     * tryAcquire(ZERO) with a holder present comes back empty without waiting for the holder and leaves no node;
     * with no holder it returns a valid lease.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void tryAcquireZeroTakesOneLook(Kind kind) throws Exception {
        ZkLease holder = holdBlocker(kind);
        ZkLock lock = kind.newLock(client(), path);
        long start = System.nanoTime();
        // The holder never lets go while this runs: waiting for it would fail the within().
        Optional<ZkLease> got = within(others.submit(() -> lock.tryAcquire(Duration.ZERO)));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        log.info("MEASURED {}: tryAcquire(ZERO) with a holder present answered in {} ms", kind, tookMillis);
        assertTrue(got.isEmpty(), "granted beside a holder: " + got);
        assertTrue(lock.tryAcquire(Duration.ofMillis(-5)).isEmpty(), "a negative wait is one look too");
        awaitNodes(List.of(name(holder)));
        assertTrue(holder.isValid());

        holder.release();
        assertNoNodeLeft();
        ZkLease lease = kept(lock.tryAcquire(Duration.ZERO).orElseThrow(() -> new AssertionError("free, yet empty")));
        assertTrue(lease.isValid());
        awaitNodes(List.of(name(lease)));
        lease.release();
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ acquireAsync

    /**
     * acquireAsync() behind another client's holder stays pending; cancel(true) deletes its node, and after the
     * holder's release nothing is granted (observed for a bounded 500 ms: the directory stays empty).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void cancellingAPendingAcquireAsyncAbandonsIt(Kind kind) throws Exception {
        ZkLease holder = holdBlocker(kind);
        ZkLock lock = kind.newLock(client(), path);
        AtomicReference<ZkLease> granted = new AtomicReference<>();
        CompletableFuture<ZkLease> pending = lock.acquireAsync();
        pending.thenAccept(granted::set);
        awaitNodeCount(2);
        assertFalse(pending.isDone(), "granted beside a holder: " + pending);
        assertTrue(pending.cancel(true));
        assertTrue(pending.isCancelled());
        awaitNodes(List.of(name(holder)));

        holder.release();
        awaitNodes(List.of());
        assertStaysEmptyFor(Duration.ofMillis(500));
        assertNull(granted.get(), "a cancelled acquisition handed out a lease");
    }

    /** acquireAsync().orTimeout(200 ms) behind a holder fails with TimeoutException and its node is deleted. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aTimedOutAcquireAsyncIsAbandoned(Kind kind) throws Exception {
        ZkLease holder = holdBlocker(kind);
        ZkLock lock = kind.newLock(client(), path);
        CompletableFuture<ZkLease> timed = lock.acquireAsync().orTimeout(SHORT.toMillis(), TimeUnit.MILLISECONDS);
        assertInstanceOf(TimeoutException.class, failureOf(timed));
        awaitNodes(List.of(name(holder)));
        holder.release();
        assertNoNodeLeft();
        // The lock object is still usable.
        ZkLease lease = kept(within(lock.acquireAsync()));
        assertTrue(lease.isValid());
        lease.release();
        assertNoNodeLeft();
    }

    /**
     * Cancel racing the grant (the holder's release returns, then at once the waiter cancels), 10 rounds: the future is
     * either cancelled or has a lease, and either way no node is left once that lease (if any) is released.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void cancelRacingTheGrantLeavesNoNode(Kind kind) throws Exception {
        ZkLock lock = kind.newLock(client(), path);
        ZkLock blocker = kind.newBlocker(client(), path);
        int cancelled = 0;
        for (int round = 0; round < 10; round++) {
            ZkLease holder = kept(blocker.acquire());
            CompletableFuture<ZkLease> pending = lock.acquireAsync();
            awaitNodeCount(2);
            holder.release(); // returns once the deletion is confirmed: the grant is on its way
            boolean wasCancelled = pending.cancel(true);
            if (wasCancelled) {
                cancelled++;
            } else {
                ZkLease lease = within(pending);
                assertTrue(lease.isValid());
                lease.release();
            }
            assertNoNodeLeft();
        }
        log.info("{}: {} of 10 racing cancels won", kind, cancelled);
    }

    // ------------------------------------------------------------------ loss

    /**
     * The lease's session expires on the server: whenLost() completes, isValid() turns false, a loss listener is
     * told once with the token, a waiter on another client gets in, and release() after the loss throws nothing.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void anExpiredSessionLosesTheLease(Kind kind) throws Exception {
        ZkClient doomed = client();
        ZkLock lock = kind.newLock(doomed, path);
        List<Long> lostTokens = new CopyOnWriteArrayList<>();
        List<ZkLock> lostLocks = new CopyOnWriteArrayList<>();
        lock.addLossListener((l, token) -> {
            lostLocks.add(l);
            lostTokens.add(token);
        });
        ZkLease lease = kept(lock.acquire());
        long token = lease.fencingToken();
        CompletableFuture<Void> lost = lease.whenLost();
        AtomicReference<String> dependentThread = new AtomicReference<>();
        lost.thenRun(() -> dependentThread.set(Thread.currentThread().getName()));

        CompletableFuture<ZkLease> next = kind.newBlocker(client(), path).acquireAsync();
        awaitNodeCount(2);
        assertFalse(next.isDone());

        long oldSession = doomed.sessionId();
        SessionExpiry.expireOnServer(doomed.zooKeeper(), server.getConnectString(), WAIT);
        lost.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertFalse(lease.isValid(), "a lost lease is invalid");
        assertTrue(lease.whenLost().isDone(), "whenLost() asked after the loss is complete");
        assertEquals(List.of(token), lostTokens, "the listener ran once, with the lease's token");
        assertSame(lock, lostLocks.get(0), "the listener is told which lock");
        Await.until(WAIT, () -> dependentThread.get() != null, "the whenLost() dependent runs");
        String t = dependentThread.get();
        assertFalse(t.contains("EventThread") || t.contains("SendThread"), "dependent ran on ZooKeeper's " + t);

        ZkLease theirs = kept(within(next));
        assertTrue(theirs.isValid());
        assertTrue(theirs.fencingToken() > token);
        lease.release(); // after the loss: nothing to do, nothing thrown
        lease.close();
        assertEquals(token, lease.fencingToken(), "the token stays readable after the loss");
        awaitNodes(List.of(name(theirs)));

        awaitNewSession(doomed, oldSession);
        theirs.release();
        // The lock object works in the client's new session.
        ZkLease again = kept(lock.acquire());
        assertTrue(again.fencingToken() > theirs.fencingToken());
        again.release();
        assertEquals(1, lostTokens.size(), "no further loss report");
        assertNoNodeLeft();
    }

    /**
     * A whenLost() dependent that throws an AssertionError does not stop the others (on the same future or
     * another whenLost() copy), and the client still builds its new session (RECONNECTED) and grants.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aThrowingWhenLostDependentBreaksNothing(Kind kind) throws Exception {
        ZkClient doomed = client();
        ZkLock lock = kind.newLock(doomed, path);
        AtomicInteger listenerCalls = new AtomicInteger();
        lock.addLossListener((l, token) -> listenerCalls.incrementAndGet());
        ZkLease lease = kept(lock.acquire());
        CompletableFuture<Void> lost = lease.whenLost();
        CountDownLatch othersRan = new CountDownLatch(2);
        CompletableFuture<Void> thrower = lost.thenRun(() -> {
            throw new AssertionError("a dependent that throws an Error");
        });
        lost.thenRun(othersRan::countDown);
        lease.whenLost().thenRun(othersRan::countDown);

        long oldSession = doomed.sessionId();
        SessionExpiry.expireOnServer(doomed.zooKeeper(), server.getConnectString(), WAIT);
        assertTrue(othersRan.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the other dependents ran");
        assertInstanceOf(AssertionError.class, failureOf(thrower));
        assertFalse(lease.isValid());
        assertEquals(1, listenerCalls.get());

        awaitNewSession(doomed, oldSession);
        // The library's callback thread still works: a new lease is granted through it.
        ZkLease again = kept(within(lock.acquireAsync()));
        assertTrue(again.isValid());
        again.release();
        assertNoNodeLeft();
    }

    /**
     * A pending acquireAsync() whose session expires neither fails nor is granted: it queues again in the
     * client's new session and is granted there once the holder releases.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aPendingAcquireAsyncQueuesAgainAfterItsSessionExpires(Kind kind) throws Exception {
        ZkLease holder = holdBlocker(kind);
        ZkClient doomed = client();
        ZkLock lock = kind.newLock(doomed, path);
        CompletableFuture<ZkLease> pending = lock.acquireAsync();
        awaitNodeCount(2);
        long oldSession = doomed.sessionId();

        SessionExpiry.expireOnServer(doomed.zooKeeper(), server.getConnectString(), WAIT);
        awaitNewSession(doomed, oldSession);
        long newSession = doomed.sessionId();
        Await.until(WAIT, () -> nodes().size() == 2 && nodes().stream()
                        .filter(n -> !n.equals(name(holder)))
                        .allMatch(n -> ownerOf(path + "/" + n) == newSession),
                () -> "the waiter queued again in session 0x" + Long.toHexString(newSession) + "; nodes " + nodes());
        assertFalse(pending.isDone(), "the pending acquisition ended with its session: " + pending);

        holder.release();
        ZkLease lease = kept(within(pending));
        assertTrue(lease.isValid());
        assertEquals(newSession, stat(lease.nodePath()).getEphemeralOwner(), "granted in the new session");
        assertFalse(pending.cancel(true), "a granted future cannot be cancelled");
        assertTrue(lease.isValid(), "cancel() after the grant leaves the lease alone");
        lease.release();
        assertNoNodeLeft();
    }

    /** The ephemeral owner of {@code nodePath}, or 0 if it is gone. */
    private long ownerOf(String nodePath) {
        try {
            Stat s = stat(nodePath);
            return s == null ? 0 : s.getEphemeralOwner();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * An interrupt ends an acquire() or a long tryAcquire() waiting behind a holder with InterruptedException
     * (status cleared), and leaves no node; interrupted before asking, it throws at once.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void anInterruptEndsAWaitingAcquire(Kind kind) throws Exception {
        ZkLease holder = holdBlocker(kind);
        ZkLock lock = kind.newLock(client(), path);
        for (boolean timed : new boolean[] {false, true}) {
            CompletableFuture<Boolean> statusAfter = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    ZkLease l = timed ? lock.tryAcquire(WAIT.multipliedBy(10)).orElse(null) : lock.acquire();
                    if (l != null) {
                        l.release();
                    }
                    statusAfter.completeExceptionally(new AssertionError("acquired beside a holder: " + l));
                } catch (InterruptedException e) {
                    statusAfter.complete(Thread.currentThread().isInterrupted());
                } catch (Throwable t) {
                    statusAfter.completeExceptionally(t);
                }
            }, "lease-test-waiter");
            waiter.setDaemon(true);
            waiter.start();
            awaitNodeCount(2);
            waiter.interrupt();
            assertFalse(within(statusAfter), "the interrupt status is cleared when it throws");
            awaitNodes(List.of(name(holder)));
        }
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, lock::acquire, "interrupted before asking");
        assertFalse(Thread.interrupted());
        assertEquals(List.of(name(holder)), nodes());
        holder.release();
        assertNoNodeLeft();
    }

    /** A lease released before its session expires is never lost: whenLost() stays pending, no listener runs. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aReleasedLeaseIsNeverLost(Kind kind) throws Exception {
        ZkClient c = client();
        ZkLock lock = kind.newLock(c, path);
        AtomicInteger listenerCalls = new AtomicInteger();
        lock.addLossListener((l, token) -> listenerCalls.incrementAndGet());
        ZkLease lease = kept(lock.acquire());
        CompletableFuture<Void> lost = lease.whenLost();
        lease.release();
        assertNoNodeLeft();

        long oldSession = c.sessionId();
        SessionExpiry.expireOnServer(c.zooKeeper(), server.getConnectString(), WAIT);
        awaitNewSession(c, oldSession);
        // A grant in the new session passes the library's callback thread after anything the loss queued there.
        ZkLease after = kept(within(lock.acquireAsync()));
        after.release();
        assertFalse(lost.isDone(), "whenLost() of a released lease completed");
        assertFalse(lease.whenLost().isDone());
        assertFalse(lease.isValid());
        assertEquals(0, listenerCalls.get(), "a loss listener ran for a released lease");
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ closed client

    /**
     * On a closed client acquire() and tryAcquire() throw IllegalStateException and acquireAsync() fails with
     * it, creating nothing.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void acquiringALeaseOnAClosedClientFails(Kind kind) throws Exception {
        ZkClient closed = client();
        ZkLock made = kind.newLock(closed, path);
        closed.close();
        ZkLock late = kind.newLock(closed, path);
        for (ZkLock lock : List.of(made, late)) {
            assertThrows(IllegalStateException.class, lock::acquire);
            assertThrows(IllegalStateException.class, () -> lock.tryAcquire(Duration.ZERO));
            assertThrows(IllegalStateException.class, () -> lock.tryAcquire(Duration.ofSeconds(1)));
            CompletableFuture<ZkLease> f = lock.acquireAsync();
            assertInstanceOf(IllegalStateException.class, failureOf(f));
        }
        assertEquals(List.of(), nodes());
    }

    /**
     * Closing the client fails its pending acquireAsync() with IllegalStateException, and ends its valid lease
     * (whenLost() completes); the other client's holder is untouched.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void closingTheClientFailsPendingAcquisitionsAndLosesLeases(Kind kind) throws Exception {
        ZkClient closing = client();
        // A lease of the closing client on a path of its own, to see close() end it.
        String otherPath = path + "-held";
        ZkLease heldHere = kept(kind.newLock(closing, otherPath).acquire());

        ZkLease holder = holdBlocker(kind);
        CompletableFuture<ZkLease> pending = kind.newLock(closing, path).acquireAsync();
        awaitNodeCount(2);
        assertFalse(pending.isDone());

        closing.close();
        assertInstanceOf(IllegalStateException.class, failureOf(pending));
        heldHere.whenLost().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertFalse(heldHere.isValid());
        heldHere.release(); // after close: nothing thrown
        awaitNodes(List.of(name(holder)));
        assertTrue(holder.isValid());
        holder.release();
        assertNoNodeLeft();
        Await.until(WAIT, () -> LockQueue.children(admin, otherPath).isEmpty(), "the closed client's node goes");
    }

    // ------------------------------------------------------------------ bad input

    /** tryAcquire(null) throws IllegalArgumentException and creates nothing. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void tryAcquireRefusesNull(Kind kind) {
        ZkLock lock = kind.newLock(client(), path);
        assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire(null));
        assertEquals(List.of(), nodes());
    }

    /** Leases of two clients on one path: mutex and write leases exclude each other, read leases share. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void leasesOfTwoClientsExcludeUnlessBothRead(Kind kind) throws Exception {
        ZkLock a = kind.newLock(client(), path);
        ZkLock b = kind.newLock(client(), path);
        ZkLease first = kept(a.acquire());
        Optional<ZkLease> second = b.tryAcquire(SHORT);
        second.ifPresent(this::kept);
        assertEquals(!kind.exclusive(), second.isPresent(), kind + ": a second client's lease beside the first");
        first.release();
        second.ifPresent(ZkLease::release);
        assertNoNodeLeft();
    }
}
