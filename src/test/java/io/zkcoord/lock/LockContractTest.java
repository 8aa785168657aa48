package io.zkcoord.lock;

import io.zkcoord.queue.QueueNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.queue.Waits;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
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
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The contract of {@link ZkLock}, written once and run against every lock type: each
 * subclass says how to make the lock under test, a <em>blocker</em> (a lock that excludes it) and a
 * <em>contender</em> (a lock of the same kind that excludes it, if the kind excludes itself).
 *
 * <ul>
 *   <li>mutex: lock, blocker and contender are all {@link ZkMutex}es;
 *   <li>write lock: all three are write sides of {@link ZkReadWriteLock}s;
 *   <li>read lock: the blocker is a write lock on the same path, and there is no contender (a
 *       read does not exclude a read), so the tests of exclusion among one kind are skipped.
 * </ul>
 *
 * <p>Every test runs against one real {@link TestingServer} per class, uses a fresh lock path, and
 * waits on conditions with deadlines, never by sleeping. Each lock is driven from an {@link Actor}
 * (a thread of its own), since holds belong to threads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class LockContractTest {

    private static final Logger log = LoggerFactory.getLogger(LockContractTest.class);

    /** Deadline of every wait that should succeed; generous, since the machine is shared. */
    static final Duration WAIT = Duration.ofSeconds(30);
    /** Session timeout of the test clients (the test server caps it at 20 s). */
    static final Duration SESSION_TIMEOUT = Duration.ofSeconds(20);

    private static final AtomicInteger PATHS = new AtomicInteger();

    private TestingServer server;
    private ZkClient admin;
    private FourLetterWords server4lw;
    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private final List<Actor> actors = new CopyOnWriteArrayList<>();
    /** The lock directory of the running test: fresh for each test. */
    String path;

    // ------------------------------------------------------------------ what a subclass provides

    /** A new object of the lock under test, on {@code client}, for the directory {@code path}. */
    protected abstract ZkLock newLock(ZkClient client, String path);

    /** What the lock under test is called: in messages and lock paths. */
    protected abstract String lockName();

    /** A new lock that excludes the lock under test (and any other blocker) on {@code path}. */
    protected abstract ZkLock newBlocker(ZkClient client, String path);

    /**
     * A new lock of the same kind as the lock under test that excludes it, or null if holders of
     * this kind share (the read lock): tests of exclusion among one kind are then skipped.
     */
    protected ZkLock newContender(ZkClient client, String path) {
        return newLock(client, path);
    }

    /**
     * The lock under test and a blocker that belong to <em>one</em> object: the same {@link
     * ZkMutex} twice, or the two sides of one {@link ZkReadWriteLock}.
     */
    protected abstract LockPair newPairOnOneObject(ZkClient client, String path);

    /** A lock under test and a lock that excludes it, made from one object. */
    record LockPair(ZkLock lock, ZkLock blocker) {
    }

    // ------------------------------------------------------------------ fixture

    @BeforeAll
    void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        admin = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
        server4lw = FourLetterWords.of(server.getConnectString());
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
        path = "/contract/" + lockName() + "/" + method + "-" + PATHS.incrementAndGet();
    }

    @AfterEach
    void closeEverything() {
        for (Actor a : actors) {
            a.close();
        }
        actors.clear();
        for (ZkClient c : clients) {
            c.close();
        }
        clients.clear();
    }

    /** A new client of the test server, closed after the test. */
    ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(SESSION_TIMEOUT).build();
        clients.add(c);
        return c;
    }

    /** A new thread to drive locks from, stopped after the test. */
    Actor actor(String name) {
        Actor a = new Actor(lockName() + "-" + name);
        actors.add(a);
        return a;
    }

    /** The lock nodes under {@code dir} now (empty if the directory does not exist). */
    List<String> nodes(String dir) {
        List<String> children = new ArrayList<>(LockQueue.children(admin, dir));
        Collections.sort(children);
        return children;
    }

    /** The nodes of the lock directory, in queue order (by sequence number). */
    List<QueueNode> queue() {
        return QueueNode.queue(nodes(path));
    }

    void awaitNodeCount(int count) {
        Await.until(WAIT, () -> nodes(path).size() == count,
                () -> "expected " + count + " nodes under " + path + ", have " + nodes(path));
    }

    /** The invariant once everything is released: no node left under the lock directory. */
    void assertNoNodeLeft() {
        Await.until(WAIT, () -> nodes(path).isEmpty(), () -> "nodes left under " + path + ": " + nodes(path));
    }

    // ------------------------------------------------------------------ exclusion under load

    /** 8 clients × 100 cycles of the same kind: never two holders at once, and a shared counter is exact. */
    @Test
    void eightClientsHundredCyclesNeverOverlap() throws Exception {
        List<ZkLock> locks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            locks.add(contenderOrSkip(client(), path));
        }
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger counter = new AtomicInteger();
        int cycles = 100;
        List<Cycler> cyclers = new ArrayList<>();
        for (int i = 0; i < locks.size(); i++) {
            cyclers.add(new Cycler("client" + i, locks.get(i), () -> {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                // A read and a later write: a second holder in between would lose an update.
                int seen = counter.get();
                Thread.yield();
                counter.set(seen + 1);
                inside.decrementAndGet();
            }));
        }
        cycleTogether(cyclers, cycles);
        assertEquals(0, overlaps.get(), "cycles that found another holder inside");
        assertEquals(8 * cycles, counter.get(), "the shared counter lost updates");
        assertNoNodeLeft();
    }

    /**
     * 4 clients with the lock under test and 4 with blockers, 50 cycles each: a blocker holder is
     * always alone, and holders of the lock under test overlap only if their kind shares.
     */
    @Test
    void locksAndBlockersNeverOverlap() throws Exception {
        boolean sameKindExcludes = newContender(admin, path) != null;
        AtomicInteger insideLock = new AtomicInteger();
        AtomicInteger insideBlocker = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger blockerCounter = new AtomicInteger();
        AtomicInteger lockHolds = new AtomicInteger();
        int cycles = 50;
        List<Cycler> cyclers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            if (i % 2 == 1) {
                cyclers.add(new Cycler("blocker" + i, newBlocker(client(), path), () -> {
                    if (insideBlocker.incrementAndGet() != 1 || insideLock.get() != 0) {
                        violations.incrementAndGet();
                    }
                    int seen = blockerCounter.get();
                    Thread.yield();
                    blockerCounter.set(seen + 1);
                    insideBlocker.decrementAndGet();
                }));
            } else {
                cyclers.add(new Cycler("lock" + i, newLock(client(), path), () -> {
                    int now = insideLock.incrementAndGet();
                    if (insideBlocker.get() != 0 || (sameKindExcludes && now != 1)) {
                        violations.incrementAndGet();
                    }
                    lockHolds.incrementAndGet();
                    Thread.yield();
                    insideLock.decrementAndGet();
                }));
            }
        }
        cycleTogether(cyclers, cycles);
        assertEquals(0, violations.get(), "holds that saw a holder they must exclude");
        assertEquals(4 * cycles, blockerCounter.get(), "the blockers' counter lost updates");
        assertEquals(4 * cycles, lockHolds.get());
        assertNoNodeLeft();
    }

    /** One client of a load test: its lock, and what it does each time it holds it. */
    private record Cycler(String name, ZkLock lock, Runnable whileHeld) {
    }

    /**
     * Each cycler, on an actor of its own, takes its lock {@code cycles} times and runs its body while
     * holding it; all start together. Returns once every cycler is done (fails after 80 s).
     */
    private void cycleTogether(List<Cycler> cyclers, int cycles) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> runs = new ArrayList<>();
        for (Cycler cycler : cyclers) {
            ZkLock lock = cycler.lock();
            runs.add(actor(cycler.name()).submit(() -> {
                start.await();
                for (int c = 0; c < cycles; c++) {
                    lock.lock();
                    try {
                        cycler.whileHeld().run();
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> run : runs) {
            run.get(80, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ fairness

    /**
     * FIFO across clients: behind a held blocker, waiters (alternately the lock under test and
     * blockers, so that even readers are separated by writers) acquire in the order their nodes
     * were created.
     */
    @Test
    void waitersAcquireInTheOrderTheirNodesWereCreated() throws Exception {
        Held holder = holdBlocker();
        QueuedInTurn waiters = queueInTurn(6, "waiter",
                i -> i % 2 == 0 ? newLock(client(), path) : newBlocker(client(), path));
        assertTrue(waiters.order().isEmpty(), "nobody acquires while the holder holds: " + waiters.order());
        holder.release();
        waiters.assertAcquiredInQueueOrder();
        assertNoNodeLeft();
    }

    /**
     * FIFO inside one JVM: threads sharing one lock object (or the two sides of one read/write
     * lock) on one client acquire in the order their nodes were created.
     */
    @Test
    void threadsOfOneObjectAcquireInTheOrderTheirNodesWereCreated() throws Exception {
        LockPair pair = newPairOnOneObject(client(), path);
        Held holder = hold(pair.blocker());
        QueuedInTurn waiters = queueInTurn(5, "thread", i -> i % 2 == 0 ? pair.lock() : pair.blocker());
        holder.release();
        waiters.assertAcquiredInQueueOrder();
        assertNoNodeLeft();
    }

    /** Waiters that each take their lock once, in turn, recording the order they got in. */
    private record QueuedInTurn(List<Integer> order, List<Future<?>> waiters) {
        /** Waits for every waiter; they must have got in in the order they were queued. */
        void assertAcquiredInQueueOrder() throws Exception {
            for (Future<?> w : waiters) {
                w.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(IntStream.range(0, waiters.size()).boxed().collect(Collectors.toList()), order);
        }
    }

    /**
     * Queues {@code n} waiters behind a holder, each on an actor of its own: waiter i asks for {@code
     * lockOf(i)}, and gets in, records i and leaves once it holds it.
     */
    private QueuedInTurn queueInTurn(int n, String name, IntFunction<ZkLock> lockOf) {
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            ZkLock lock = lockOf.apply(i);
            waiters.add(actor(name + i).submit(() -> {
                lock.lock();
                order.add(id);
                lock.unlock();
                return null;
            }));
            awaitNodeCount(i + 2); // this waiter's node is in the queue before the next one starts
        }
        return new QueuedInTurn(order, waiters);
    }

    // ------------------------------------------------------------------ tryLock and interrupts

    /** tryLock() is false while a blocker holds elsewhere and leaves no node; true once free. */
    @Test
    void tryLockFailsWhileHeldElsewhereAndLeavesNoNode() throws Exception {
        Held holder = holdBlocker();
        String holderNode = nodes(path).get(0);
        ZkLock lock = newLock(client(), path);
        Actor loser = actor("loser");
        assertFalse(loser.ask(lock::tryLock));
        assertEquals(List.of(holderNode), nodes(path), "the loser's node must be gone on return");
        assertFalse(loser.ask(lock::isHeldByCurrentThread));
        assertFalse(loser.ask(() -> lock.tryLock(0, TimeUnit.SECONDS)), "zero time: one look");
        assertFalse(loser.ask(() -> lock.tryLock(-5, TimeUnit.SECONDS)), "negative time: one look");
        assertEquals(List.of(holderNode), nodes(path));
        holder.release();
        assertTrue(loser.ask(lock::tryLock), "free: tryLock() takes it");
        assertTrue(loser.ask(lock::isHeldByCurrentThread));
        loser.run(lock::unlock);
        assertNoNodeLeft();
    }

    /** tryLock(200 ms) is false after at least 200 ms while a blocker holds, and leaves no node. */
    @Test
    void timedTryLockTimesOutAndLeavesNoNode() throws Exception {
        Held holder = holdBlocker();
        String holderNode = nodes(path).get(0);
        ZkLock lock = newLock(client(), path);
        Actor loser = actor("loser");
        long[] elapsedNanos = new long[1];
        boolean got = loser.call(() -> {
            long start = System.nanoTime();
            boolean result = lock.tryLock(200, TimeUnit.MILLISECONDS);
            elapsedNanos[0] = System.nanoTime() - start;
            return result;
        });
        assertFalse(got);
        assertTrue(elapsedNanos[0] >= TimeUnit.MILLISECONDS.toNanos(200),
                "gave up after " + TimeUnit.NANOSECONDS.toMillis(elapsedNanos[0]) + " ms, before 200 ms");
        assertEquals(List.of(holderNode), nodes(path), "the loser's node must be gone on return");
        holder.release();
        assertTrue(loser.ask(() -> lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
        loser.run(lock::unlock);
        assertNoNodeLeft();
    }

    /** An interrupt while waiting in lockInterruptibly() ends it with InterruptedException and no node. */
    @Test
    void interruptEndsLockInterruptiblyAndLeavesNoNode() throws Exception {
        Held holder = holdBlocker();
        String holderNode = nodes(path).get(0);
        ZkLock lock = newLock(client(), path);
        Actor waiter = actor("waiter");
        Future<Boolean> waiting = waiter.submit(() -> {
            try {
                lock.lockInterruptibly();
                return true;
            } catch (InterruptedException e) {
                assertFalse(Thread.currentThread().isInterrupted(), "the status is cleared when it throws");
                assertFalse(lock.isHeldByCurrentThread());
                throw e;
            }
        });
        awaitNodeCount(2);
        waiter.thread().interrupt();
        assertFailsWith(InterruptedException.class, waiting);
        assertEquals(List.of(holderNode), nodes(path), "the waiter's node must be gone when it throws");

        // Interrupted before asking: throws at once, creates nothing.
        Future<Boolean> preInterrupted = waiter.submit(() -> {
            Thread.currentThread().interrupt();
            lock.lockInterruptibly();
            return true;
        });
        assertFailsWith(InterruptedException.class, preInterrupted);
        Future<Boolean> preInterruptedTimed = waiter.submit(() -> {
            Thread.currentThread().interrupt();
            return lock.tryLock(1, TimeUnit.SECONDS);
        });
        assertFailsWith(InterruptedException.class, preInterruptedTimed);
        assertEquals(List.of(holderNode), nodes(path));
        holder.release();
        assertNoNodeLeft();
    }

    /** lock() interrupted while waiting keeps waiting, acquires, and returns with the interrupt flag set. */
    @Test
    void interruptedLockKeepsWaitingAndReturnsInterrupted() throws Exception {
        Held holder = holdBlocker();
        ZkLock lock = newLock(client(), path);
        Actor waiter = actor("waiter");
        Future<boolean[]> waiting = waiter.submit(() -> {
            lock.lock();
            boolean interrupted = Thread.currentThread().isInterrupted();
            boolean held = lock.isHeldByCurrentThread();
            lock.unlock(); // with the flag still set: the release must still delete the node
            return new boolean[] {held, interrupted, Thread.currentThread().isInterrupted()};
        });
        awaitNodeCount(2);
        String waiterNode = queue().get(1).name();
        Thread t = waiter.thread();
        t.interrupt();
        // The wait consumes the interrupt (flag cleared) and parks again, still queued.
        Await.until(WAIT, () -> !t.isInterrupted()
                        && (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING),
                "the waiter absorbs the interrupt and waits again");
        assertFalse(waiting.isDone(), "lock() must not return while the blocker holds");
        assertTrue(nodes(path).contains(waiterNode), "the waiter keeps its place in the queue");
        holder.release();
        boolean[] result = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(result[0], "lock() returned holding the lock");
        assertTrue(result[1], "lock() returned with the interrupt flag set again");
        assertTrue(result[2], "unlock() keeps the interrupt flag");
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ reentrancy and ownership

    /**
     * Reentrancy: two locks and one unlock leave it held with the same node; the second unlock
     * releases and deletes the node. The nested lock makes no ZooKeeper request and keeps the token.
     */
    @Test
    void reentrantHoldsCountAndNestedLockCostsNoRequest() throws Exception {
        ZkLock lock = newLock(client(), path);
        Actor owner = actor("owner");
        owner.run(lock::lock);
        long token = owner.call(lock::fencingToken);
        List<String> heldNodes = nodes(path);
        assertEquals(1, heldNodes.size());

        // A ping of an idle session may slip between two mntr calls: take the least of a few tries.
        long fewest = Long.MAX_VALUE;
        for (int attempt = 0; attempt < 5 && fewest != 0; attempt++) {
            long before = server4lw.packetsReceived();
            owner.run(lock::lock);
            long after = server4lw.packetsReceived();
            fewest = Math.min(fewest, after - before - 1); // the second mntr counts itself
            assertEquals(token, owner.call(lock::fencingToken), "a nested lock keeps the token");
            owner.run(lock::unlock);
        }
        assertEquals(0, fewest, "requests made by a nested lock()");

        owner.run(lock::lock);
        owner.run(lock::unlock);
        assertTrue(owner.ask(lock::isHeldByCurrentThread), "one unlock of two: still held");
        assertEquals(heldNodes, nodes(path), "one unlock of two: the node is still there");
        assertEquals(token, owner.call(lock::fencingToken));
        owner.run(lock::unlock);
        assertFalse(owner.ask(lock::isHeldByCurrentThread), "second unlock: released");
        assertEquals(List.of(), nodes(path), "the last unlock deletes the node before returning");
        assertThrows(IllegalMonitorStateException.class, () -> owner.run(lock::unlock), "one unlock too many");
    }

    /**
     * unlock() by a thread that does not hold throws IllegalMonitorStateException (and changes
     * nothing); so does fencingToken() without a hold; newCondition() is unsupported.
     */
    @Test
    void ownershipIsEnforced() throws Exception {
        ZkLock lock = newLock(client(), path);
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "unlock with no holder at all");
        assertThrows(IllegalMonitorStateException.class, lock::fencingToken, "token with no hold");
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
        Actor owner = actor("owner");
        owner.run(lock::lock);
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "unlock by a non-owner thread");
        assertThrows(IllegalMonitorStateException.class, lock::fencingToken, "token of a non-owner thread");
        assertFalse(lock.isHeldByCurrentThread());
        assertTrue(owner.ask(lock::isHeldByCurrentThread), "a foreign unlock changes nothing");
        assertEquals(1, nodes(path).size());
        owner.run(lock::unlock);
        assertNoNodeLeft();
    }

    /** Two threads using one lock object (or the two sides of one read/write lock) exclude each other. */
    @Test
    void twoThreadsOnOneObjectExcludeEachOther() throws Exception {
        LockPair pair = newPairOnOneObject(client(), path);
        assertMutualExclusion(pair.blocker(), pair.lock());
    }

    /** Two lock objects on one client (one ZooKeeper session) exclude each other as two processes do. */
    @Test
    void twoObjectsOnOneClientExcludeEachOther() throws Exception {
        ZkClient shared = client();
        assertMutualExclusion(newBlocker(shared, path), newLock(shared, path));
    }

    /** Two lock objects of the same kind on one client exclude each other (mutex and write only). */
    @Test
    void twoContendersOnOneClientExcludeEachOther() throws Exception {
        ZkClient shared = client();
        assertMutualExclusion(contenderOrSkip(shared, path), newLock(shared, path));
    }

    /**
     * {@code first} and {@code second}, each driven by its own thread: while one holds, the other
     * cannot take it, and it waits until the first lets go; in both directions.
     */
    private void assertMutualExclusion(ZkLock first, ZkLock second) throws Exception {
        Actor a = actor("a");
        Actor b = actor("b");
        a.run(first::lock);
        assertFalse(b.ask(second::tryLock), "the second must not get in beside the first");
        Future<?> waiting = b.runLater(second::lock);
        awaitNodeCount(2);
        assertFalse(waiting.isDone());
        a.run(first::unlock);
        waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(b.ask(second::isHeldByCurrentThread));
        assertFalse(a.ask(first::tryLock), "nor the first beside the second");
        assertFalse(a.ask(first::isHeldByCurrentThread));
        b.run(second::unlock);
        assertTrue(a.ask(first::tryLock));
        a.run(first::unlock);
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ fencing tokens

    /** Fencing tokens strictly increase over 50 successive holders on several clients. */
    @Test
    void fencingTokensStrictlyIncreaseOverFiftyHolders() throws Exception {
        List<ZkClient> several = List.of(client(), client(), client());
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 50; i++) {
            ZkClient c = several.get(i % several.size());
            ZkLock lock = i % 2 == 0 ? newLock(c, path) : newBlocker(c, path);
            lock.lock();
            try {
                long token = lock.fencingToken();
                assertTrue(token > previous, "holder " + i + " got token " + token + " after " + previous);
                previous = token;
            } finally {
                lock.unlock();
            }
        }
        assertNoNodeLeft();
    }

    /**
     * Fencing tokens still increase after the lock directory was deleted and made again, although
     * the sequence numbers restart.
     */
    @Test
    void fencingTokensIncreaseAcrossDeletionOfTheDirectory() throws Exception {
        ZkLock lock = newLock(client(), path);
        long before = Long.MIN_VALUE;
        long sequenceBefore = -1;
        // A directory made by hand: the releases leave it (they remove only what the library made),
        // so the sequence gets past 0 before the directory is deleted.
        FaultFixtures.createPath(admin.zooKeeper(), path);
        for (int i = 0; i < 2; i++) { // twice, so the sequence is past 0 and its restart is visible
            lock.lock();
            try {
                before = lock.fencingToken();
                sequenceBefore = queue().get(0).sequence();
            } finally {
                lock.unlock();
            }
        }
        assertNoNodeLeft();
        try {
            admin.zooKeeper().delete(path, -1);
        } catch (KeeperException.NoNodeException e) {
            // the server's container sweep removed the empty directory first: just as good
        }
        assertNull(admin.zooKeeper().exists(path, false));

        lock.lock();
        try {
            long after = lock.fencingToken();
            List<QueueNode> q = queue();
            assertEquals(1, q.size());
            assertTrue(q.get(0).sequence() < sequenceBefore, "a new directory numbers from 0 again: " + q);
            assertTrue(after > before, "token " + after + " after the directory was made again, before: " + before);
        } finally {
            lock.unlock();
        }
        assertNoNodeLeft();
    }

    // ------------------------------------------------------------------ session loss and closing

    /**
     * The holder's session expires on the server: a blocker on another client acquires; the old
     * holder's isHeldByCurrentThread() turns false, its loss listener runs exactly once with the
     * hold's token, and its unlock() does not throw.
     */
    @Test
    void sessionExpiredOnTheServerLosesTheHold() throws Exception {
        ZkClient doomed = client();
        ZkLock lock = newLock(doomed, path);
        List<Long> lostTokens = new CopyOnWriteArrayList<>();
        List<ZkLock> lostLocks = new CopyOnWriteArrayList<>();
        lock.addLossListener((l, token) -> {
            lostLocks.add(l);
            lostTokens.add(token);
        });
        Actor holder = actor("holder");
        holder.run(lock::lock);
        long token = holder.call(lock::fencingToken);

        ZkLock blocker = newBlocker(client(), path);
        Actor next = actor("next");
        Future<?> nextAcquires = next.runLater(blocker::lock);
        awaitNodeCount(2);

        SessionExpiry.expireOnServer(doomed.zooKeeper(), server.getConnectString(), WAIT);
        nextAcquires.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(next.ask(blocker::isHeldByCurrentThread));
        Await.until(WAIT, () -> !holder.callUnchecked(lock::isHeldByCurrentThread),
                "the old holder sees its hold is gone");
        Await.until(WAIT, () -> !lostTokens.isEmpty(), "the loss listener runs");
        assertEquals(List.of(token), lostTokens, "the listener ran once, with the token of the hold");
        assertSame(lock, lostLocks.get(0), "the listener is told which lock");
        assertEquals(token, holder.call(lock::fencingToken), "the lost hold's token stays readable until unlock");
        holder.run(lock::unlock); // must not throw
        assertThrows(IllegalMonitorStateException.class, () -> holder.call(lock::fencingToken));
        assertEquals(1, lostTokens.size(), "the listener ran exactly once");

        next.run(blocker::unlock);
        // The client has a new session: the old holder can take the lock again.
        holder.run(lock::lock);
        assertTrue(holder.ask(lock::isHeldByCurrentThread));
        holder.run(lock::unlock);
        assertEquals(1, lostTokens.size(), "no further loss report");
        assertNoNodeLeft();
    }

    /**
     * A client closed without unlocking: another client acquires at once (well under the session
     * timeout); the old holder's unlock() after close() does not throw.
     */
    @Test
    void closedClientFreesTheLockAtOnce() throws Exception {
        ZkClient closing = client();
        ZkLock lock = newLock(closing, path);
        Actor holder = actor("holder");
        holder.run(lock::lock);
        ZkLock blocker = newBlocker(client(), path);
        Actor next = actor("next");
        Future<?> nextAcquires = next.runLater(blocker::lock);
        awaitNodeCount(2);
        long start = System.nanoTime();
        closing.close();
        nextAcquires.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        log.info("{}: acquired {} ms after the holder's client closed (session timeout {} ms)", lockName(),
                tookMillis, SESSION_TIMEOUT.toMillis());
        // Half the session timeout: room for a busy machine, and a node that went only with the session (20 s) fails.
        assertTrue(tookMillis < SESSION_TIMEOUT.toMillis() / 2,
                "took " + tookMillis + " ms: the node must go with the close, not with the session timeout");
        assertFalse(holder.ask(lock::isHeldByCurrentThread));
        holder.run(lock::unlock); // after close(): clears local state, does not throw
        assertThrows(IllegalMonitorStateException.class, () -> holder.run(lock::unlock), "nothing left to release");
        next.run(blocker::unlock);
        assertNoNodeLeft();
    }

    /** Acquiring, by any method, through a closed client throws IllegalStateException and creates nothing. */
    @Test
    void acquiringOnAClosedClientThrows() throws Exception {
        ZkClient closed = client();
        ZkLock made = newLock(closed, path);
        closed.close();
        ZkLock late = newLock(closed, path);
        for (ZkLock lock : List.of(made, late)) {
            assertThrows(IllegalStateException.class, lock::lock);
            assertThrows(IllegalStateException.class, lock::tryLock);
            assertThrows(IllegalStateException.class, () -> lock.tryLock(1, TimeUnit.SECONDS));
            assertThrows(IllegalStateException.class, lock::lockInterruptibly);
            assertFalse(lock.isHeldByCurrentThread());
        }
        assertEquals(List.of(), nodes(path));
    }

    /** close() wakes a thread of that client waiting in lock(), which throws IllegalStateException. */
    @Test
    void closeWakesWaitersWithIllegalStateException() throws Exception {
        Held holder = holdBlocker();
        ZkClient closing = client();
        ZkLock lock = newLock(closing, path);
        ZkLock timed = newLock(closing, path);
        Actor waiter = actor("waiter");
        Actor timedWaiter = actor("timed-waiter");
        Future<?> waiting = waiter.runLater(lock::lock);
        awaitNodeCount(2);
        Future<Boolean> waitingTimed = timedWaiter.submit(() -> timed.tryLock(WAIT.toMillis() * 10, TimeUnit.MILLISECONDS));
        awaitNodeCount(3);
        closing.close();
        assertFailsWith(IllegalStateException.class, waiting);
        assertFailsWith(IllegalStateException.class, waitingTimed);
        awaitNodeCount(1);
        assertTrue(holder.holds());
        holder.release();
        assertNoNodeLeft();
    }

    /**
     * close() while the waiter's create is still on the wire: when the reply comes, the session has
     * ended, and the waiter throws IllegalStateException (not the internal SessionLostException of
     * the call that found the session over); its node goes with the session.
     */
    @Test
    void closeDuringARequestInFlightThrowsIllegalStateException() throws Exception {
        Held holder = holdBlocker();
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString())) {
            ZkClient closing = ZkClient.builder().connectString(proxy.connectString())
                    .sessionTimeout(SESSION_TIMEOUT).build();
            clients.add(closing);
            ZkLock lock = newLock(closing, path);
            Actor waiter = actor("waiter");
            proxy.stall();
            Future<?> waiting = waiter.runLater(lock::lock);
            // No thread sits in a ZooKeeper call any more: the create is on the wire (the proxy holds
            // it) once the waiter is parked waiting for its acquisition.
            Await.until(WAIT, () -> parkedIn(waiter.thread(), Waits.class, "await"), "the waiter's create is on the wire");
            Actor closer = actor("closer");
            Future<?> closed = closer.runLater(closing::close);
            Await.until(WAIT, () -> closing.state() == ConnectionState.CLOSED, "the client reports CLOSED");
            proxy.heal(); // the create's reply, then the close, reach the client
            assertFailsWith(IllegalStateException.class, waiting);
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        awaitNodeCount(1);
        holder.release();
        assertNoNodeLeft();
    }

    /** True if {@code t} is blocked inside {@code type}'s method {@code method}. */
    private static boolean parkedIn(Thread t, Class<?> type, String method) {
        if (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(type.getName()) && e.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ bad input

    /** Every invalid argument fails at construction (or call) with IllegalArgumentException. */
    @Test
    void invalidArgumentsAreRefused() {
        ZkClient c = client();
        assertThrows(IllegalArgumentException.class, () -> newLock(null, "/locks/x"), "null client");
        List<String> badPaths = new ArrayList<>(List.of("", "locks/x", "/locks/x/", "/", "/locks//x", "//locks",
                "/locks/\u0000x", "/locks/\u0001", "/locks/\ud800", "/locks/./x", "/locks/../x", "/zookeeper",
                "/zookeeper/locks"));
        badPaths.add(null);
        for (String bad : badPaths) {
            assertThrows(IllegalArgumentException.class, () -> newLock(c, bad), "path " + printable(bad));
        }
        ZkLock lock = newLock(c, path);
        assertThrows(IllegalArgumentException.class, () -> lock.tryLock(1, null), "null time unit");
        assertThrows(IllegalArgumentException.class, () -> lock.addLossListener(null), "null listener");
        assertEquals(path, lock.path());
        assertEquals(List.of(), nodes(path));
    }

    // ------------------------------------------------------------------ helpers

    /** A lock held by an actor of its own. */
    record Held(Actor actor, ZkLock lock) {
        /** Whether the holding actor still holds the lock, by its own account. */
        boolean holds() throws Exception {
            return actor.ask(lock::isHeldByCurrentThread);
        }

        /** The holding actor unlocks. */
        void release() throws Exception {
            actor.run(lock::unlock);
        }
    }

    /** {@code lock}, taken by a new actor "holder". */
    Held hold(ZkLock lock) throws Exception {
        Actor holder = actor("holder");
        holder.run(lock::lock);
        return new Held(holder, lock);
    }

    /** A blocker on a client of its own, taken by a new actor "holder". */
    Held holdBlocker() throws Exception {
        return hold(newBlocker(client(), path));
    }

    private ZkLock contenderOrSkip(ZkClient c, String dir) {
        ZkLock contender = newContender(c, dir);
        assumeTrue(contender != null, lockName() + " holders share: no exclusion among the same kind to test");
        return contender;
    }

    private static String printable(String s) {
        if (s == null) {
            return "null";
        }
        return s.chars().mapToObj(ch -> ch < 0x20 || ch > 0x7e ? String.format("\\u%04x", ch) : String.valueOf((char) ch))
                .collect(Collectors.joining("", "\"", "\""));
    }

    /** What {@code f} failed with, waiting for it; fails the test if it succeeds or hangs. */
    static Throwable failureOf(Future<?> f) {
        try {
            Object result = f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            return fail("expected a failure, got " + result);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return fail("still running after " + WAIT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted");
        }
    }

    /** Asserts that {@code f} fails with a {@code type}; otherwise fails with the actual failure as cause. */
    static void assertFailsWith(Class<? extends Throwable> type, Future<?> f) {
        Throwable actual = failureOf(f);
        if (!type.isInstance(actual)) {
            throw new AssertionError("expected " + type.getName() + ", got " + actual, actual);
        }
    }

    /** Something that runs on an actor's thread and may throw. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    /**
     * One thread to drive locks from, since holds belong to threads. {@link #call} runs a task on
     * it and waits, rethrowing what the task threw.
     */
    static final class Actor implements AutoCloseable {
        private final ExecutorService executor;
        private final AtomicReference<Thread> thread = new AtomicReference<>();

        Actor(String name) {
            executor = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                thread.set(t);
                return t;
            });
            submit(() -> null); // start the thread now, so thread() is known
            Await.until(WAIT, () -> thread.get() != null, "actor thread " + name + " starts");
        }

        Thread thread() {
            return thread.get();
        }

        <T> Future<T> submit(Callable<T> task) {
            return executor.submit(task);
        }

        <T> T call(Callable<T> task) throws Exception {
            try {
                return submit(task).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception ex) {
                    throw ex;
                }
                if (cause instanceof Error err) {
                    throw err;
                }
                throw e;
            }
        }

        /** As {@link #call}, for a yes/no question such as {@code lock::tryLock}. */
        boolean ask(Callable<Boolean> question) throws Exception {
            return call(question);
        }

        void run(Step step) throws Exception {
            call(asTask(step));
        }

        /** Starts {@code step} on this actor's thread without waiting for it. */
        Future<?> runLater(Step step) {
            return submit(asTask(step));
        }

        private static Callable<Void> asTask(Step step) {
            return () -> {
                step.run();
                return null;
            };
        }

        /** As {@link #call}, for conditions polled by {@link Await}. */
        <T> T callUnchecked(Callable<T> task) {
            try {
                return call(task);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void close() {
            executor.shutdownNow();
            try {
                if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.warn("actor {} did not stop", thread.get());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

}
