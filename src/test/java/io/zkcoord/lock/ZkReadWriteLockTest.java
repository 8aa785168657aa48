package io.zkcoord.lock;

import io.zkcoord.queue.QueueNode;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.test.FencedResource;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZkReadWriteLock}-specific behaviour on a real server: sharing, exclusion, FIFO across
 * modes, no writer starvation, downgrade, refused upgrade, fencing tokens across modes and session
 * loss. (The {@link ZkLock} contract of each side is tested elsewhere.)
 *
 * <p>Each "party" stands for one process: its own {@link ZkClient} (own session), its own lock
 * object, and one thread that does all its locking, since holds belong to threads. Whether a
 * queued party is still blocked is checked on the server's queue with {@link LockRule}, not by
 * waiting to see whether it acquires.
 */
@Timeout(90)
class ZkReadWriteLockTest {

    private static final Logger log = LoggerFactory.getLogger(ZkReadWriteLockTest.class);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestingServer server;

    private final List<Party> parties = new ArrayList<>();
    /** "NAME+" when a party acquired, "NAME-" just before it releases, in order. */
    private final List<String> events = new CopyOnWriteArrayList<>();
    private ZkClient admin;
    private String path;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void setUp(TestInfo info) {
        admin = ZkClient.builder().connectString(server.getConnectString()).build();
        path = "/rw/" + info.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() {
        for (Party p : parties) {
            p.close();
        }
        admin.close();
    }

    // ------------------------------------------------------------------ sharing and exclusion

    /** Several readers (separate sessions) hold at once; a writer then waits for all of them and excludes everyone. */
    @Test
    void readersShareAndWriterExcludesAll() throws Exception {
        int n = 5;
        List<Party> readers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Party r = party("R" + i);
            readers.add(r);
            r.lockNow(r.read());
        }
        for (Party r : readers) {
            assertTrue(r.on(() -> r.read().isHeldByCurrentThread()), r + " holds the read lock");
        }
        assertEquals(n, queue().size());
        assertTrue(queue().stream().allMatch(node -> NodeKind.of(node) == NodeKind.READ));

        Party w = party("W");
        assertFalse(w.on(() -> w.write().tryLock()), "a writer cannot get in beside readers");
        assertFalse(w.on(() -> w.write().tryLock(50, TimeUnit.MILLISECONDS)));
        assertEquals(n, queue().size(), "failed attempts leave no node");

        Future<Void> writer = queued(w, w.write(), n + 1);
        for (int i = 0; i < n - 1; i++) {
            readers.get(i).release(readers.get(i).read());
            assertWaitsFor(w, readers.get(n - 1));
        }
        readers.get(n - 1).release(readers.get(n - 1).read());
        get(writer);

        Party other = party("O");
        assertFalse(other.on(() -> other.read().tryLock()), "no reader beside a writer");
        assertFalse(other.on(() -> other.write().tryLock()), "no second writer");
        Party again = readers.get(0);
        assertFalse(again.on(() -> again.read().tryLock(50, TimeUnit.MILLISECONDS)));
        // Another thread of the writer's own process is excluded as well: holds belong to threads.
        assertFalse(call(() -> w.read().tryLock()), "another thread sharing the writer's session");
        assertFalse(call(() -> w.write().tryLock()));
        assertEquals(1, queue().size());

        w.release(w.write());
        awaitQueueSize(0);
    }

    /** 8 sessions, 90% reads and 10% writes, 100 cycles each: a writer never overlaps anyone, and tokens rise. */
    @Test
    void mixedLoadHasNoViolations() throws Exception {
        int clients = 8;
        int cycles = 100;
        AtomicInteger activeReaders = new AtomicInteger();
        AtomicInteger activeWriters = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger maxReaders = new AtomicInteger();
        AtomicInteger writes = new AtomicInteger();
        AtomicLong highestEndedToken = new AtomicLong(Long.MIN_VALUE);
        AtomicInteger tokenViolations = new AtomicInteger();
        List<Future<Void>> loops = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            Party p = party("P" + c);
            Random random = new Random(1234 + c);
            loops.add(p.submit(() -> {
                for (int i = 0; i < cycles; i++) {
                    boolean write = random.nextInt(10) == 0;
                    ZkLock lock = write ? p.write() : p.read();
                    lock.lock();
                    try {
                        long token = lock.fencingToken();
                        if (write) {
                            writes.incrementAndGet();
                            if (token <= highestEndedToken.get()) {
                                tokenViolations.incrementAndGet();
                            }
                            if (activeWriters.incrementAndGet() != 1 | activeReaders.get() != 0) {
                                violations.incrementAndGet();
                            }
                            Thread.yield();
                            if (activeWriters.decrementAndGet() != 0 | activeReaders.get() != 0) {
                                violations.incrementAndGet();
                            }
                        } else {
                            int readers = activeReaders.incrementAndGet();
                            maxReaders.accumulateAndGet(readers, Math::max);
                            if (activeWriters.get() != 0) {
                                violations.incrementAndGet();
                            }
                            Thread.yield();
                            if (activeWriters.get() != 0) {
                                violations.incrementAndGet();
                            }
                            activeReaders.decrementAndGet();
                        }
                        // Recorded before the release: a writer granted later must exceed it.
                        highestEndedToken.accumulateAndGet(token, Math::max);
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        for (Future<Void> loop : loops) {
            loop.get(60, TimeUnit.SECONDS);
        }
        log.info("mixed load: {} cycles ({} writes) on {} sessions in {} ms, up to {} readers at once",
                clients * cycles, writes.get(), clients, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                maxReaders.get());
        assertEquals(0, violations.get(), "a writer overlapped another holder");
        assertEquals(0, tokenViolations.get(), "a writer's token did not exceed an earlier hold's");
        assertTrue(writes.get() > 0, "the seeds give some writes");
        awaitQueueSize(0);
    }

    // ------------------------------------------------------------------ FIFO and starvation

    /** With a writer holding, R1 W2 R3 queued in that order acquire one after another, each after the previous released. */
    @Test
    void fifoAcrossModes() throws Exception {
        Party w0 = party("W0");
        Party r1 = party("R1");
        Party w2 = party("W2");
        Party r3 = party("R3");
        w0.lockNow(w0.write());
        Future<Void> f1 = queued(r1, r1.read(), 2);
        Future<Void> f2 = queued(w2, w2.write(), 3);
        Future<Void> f3 = queued(r3, r3.read(), 4);
        assertWaitsFor(r1, w0);
        assertWaitsFor(w2, r1);
        assertWaitsFor(r3, w2);

        w0.release(w0.write());
        get(f1);
        assertWaitsFor(w2, r1);
        assertWaitsFor(r3, w2);
        assertFalse(f2.isDone() || f3.isDone());

        r1.release(r1.read());
        get(f2);
        assertWaitsFor(r3, w2);
        assertFalse(f3.isDone());

        w2.release(w2.write());
        get(f3);
        r3.release(r3.read());
        assertEquals(List.of("W0+", "W0-", "R1+", "R1-", "W2+", "W2-", "R3+", "R3-"), events);
        awaitQueueSize(0);
    }

    /**
     * A writer queued behind active readers gets in once those readers leave, although new readers
     * keep arriving after it: they wait for the writer, and a reader's tryLock fails meanwhile.
     */
    @Test
    void writerIsNotStarvedByArrivingReaders() throws Exception {
        Party r1 = party("R1");
        Party r2 = party("R2");
        Party w3 = party("W3");
        Party r4 = party("R4");
        Party r5 = party("R5");
        Party r6 = party("R6");
        r1.lockNow(r1.read());
        r2.lockNow(r2.read());
        Future<Void> writer = queued(w3, w3.write(), 3);
        assertWaitsFor(w3, r2);

        Future<Void> late4 = queued(r4, r4.read(), 4);
        assertFalse(r6.on(() -> r6.read().tryLock()), "a new reader may not pass a queued writer");
        assertEquals(4, queue().size());
        r1.release(r1.read());
        assertWaitsFor(w3, r2);
        Future<Void> late5 = queued(r5, r5.read(), 4); // R1 left, R5 came
        assertWaitsFor(r4, w3);
        assertWaitsFor(r5, w3);

        r2.release(r2.read());
        get(writer);
        assertWaitsFor(r4, w3);
        assertWaitsFor(r5, w3);
        assertFalse(late4.isDone() || late5.isDone());

        w3.release(w3.write());
        get(late4);
        get(late5);
        assertTrue(r4.on(() -> r4.read().isHeldByCurrentThread()) && r5.on(() -> r5.read().isHeldByCurrentThread()),
                "the readers that queued behind the writer hold together");
        r4.release(r4.read());
        r5.release(r5.read());
        assertTrue(events.indexOf("W3+") > events.indexOf("R2-"));
        assertTrue(events.indexOf("R4+") > events.indexOf("W3-"));
        assertTrue(events.indexOf("R5+") > events.indexOf("W3-"));
        awaitQueueSize(0);
    }

    // ------------------------------------------------------------------ downgrade and upgrade

    /**
     * Downgrade with a writer queued: the read is granted at once, and after the write release the
     * queued writer (and the reader behind it) stay out until the downgraded read is released.
     */
    @Test
    void downgradeKeepsQueuedWriterOut() throws Exception {
        Party t = party("T");
        Party w2 = party("W2");
        Party r3 = party("R3");
        t.lockNow(t.write());
        Future<Void> writer = queued(w2, w2.write(), 2);
        Future<Void> reader = queued(r3, r3.read(), 3);

        assertTrue(t.on(() -> t.read().tryLock()), "a write holder takes the read lock at once (tryLock never waits)");
        t.release(t.write());
        assertTrue(t.on(() -> t.read().isHeldByCurrentThread()), "still reading after the write release");
        assertFalse(t.on(() -> t.write().isHeldByCurrentThread()));
        assertBlocked(w2);
        assertBlocked(r3);
        assertFalse(writer.isDone() || reader.isDone());
        Party late = party("R4");
        assertFalse(late.on(() -> late.read().tryLock()), "a new reader stays behind the queued writer too");

        events.add("T-read-");
        t.unlock(t.read());
        get(writer);
        assertBlocked(r3);
        w2.release(w2.write());
        get(reader);
        r3.release(r3.read());
        assertEquals(List.of("T+", "T-", "T-read-", "W2+", "W2-", "R3+", "R3-"), events);
        awaitQueueSize(0);
    }

    /** Downgrade with nobody queued: after the write release another reader gets in beside the downgraded reader. */
    @Test
    void downgradeLetsOtherReadersIn() throws Exception {
        Party t = party("T");
        Party r = party("R");
        t.lockNow(t.write());
        t.lockNow(t.read());
        assertFalse(r.on(() -> r.read().tryLock()), "not while the write lock is held");
        t.release(t.write());
        r.lockNow(r.read());
        assertTrue(t.on(() -> t.read().isHeldByCurrentThread()));
        assertTrue(r.on(() -> r.read().isHeldByCurrentThread()));
        assertTrue(queue().stream().allMatch(node -> NodeKind.of(node) == NodeKind.READ), "the write node is gone");
        t.release(t.read());
        r.release(r.read());
        awaitQueueSize(0);
    }

    /** A thread holding only the read lock is refused the write lock at once by every method, and no write node is made. */
    @Test
    void upgradeIsRefusedByEveryMethod() throws Exception {
        Party t = party("T");
        t.lockNow(t.read());
        List<String> before = names();
        assertEquals(1, before.size());
        ZkLock write = t.write();
        List<Callable<Object>> attempts = List.of(
                () -> {
                    write.lock();
                    return "lock";
                },
                () -> {
                    write.lockInterruptibly();
                    return "lockInterruptibly";
                },
                write::tryLock,
                () -> write.tryLock(10, TimeUnit.MINUTES));
        for (Callable<Object> attempt : attempts) {
            Callable<Throwable> refused = () -> {
                try {
                    return fail("upgrade granted: " + attempt.call());
                } catch (IllegalMonitorStateException e) {
                    return e;
                }
            };
            Throwable thrown = t.on(refused);
            assertInstanceOf(IllegalMonitorStateException.class, thrown);
            assertEquals(before, names(), "no write node was created");
            assertTrue(t.on(() -> t.read().isHeldByCurrentThread()));
            assertFalse(t.on(() -> write.isHeldByCurrentThread()));
        }
        t.release(t.read());
        assertTrue(t.on(() -> write.tryLock()), "once the read is released, the write lock is granted");
        t.release(write);
        awaitQueueSize(0);
    }

    // ------------------------------------------------------------------ fencing

    /**
     * A writer's fencing token exceeds the token of every hold, read or write, that ended before it
     * was granted: after concurrent readers, after a reader that queued behind a writer, and after
     * a downgraded read.
     */
    @Test
    void writerTokenExceedsEveryEndedHold() throws Exception {
        FencedResource resource = new FencedResource();
        List<Long> ended = new ArrayList<>();
        Party a = party("A");
        Party b = party("B");
        Party c = party("C");

        // Two readers together, then a writer.
        a.lockNow(a.read());
        b.lockNow(b.read());
        ended.add(endHold(a, a.read(), resource));
        Future<Void> w = c.lockLater(c.write());
        ended.add(endHold(b, b.read(), resource));
        get(w);
        assertWriterTokenAbove(c, ended);

        // A reader and a writer queued behind the writer.
        Future<Void> r = queued(a, a.read(), 2);
        Future<Void> w2 = queued(b, b.write(), 3);
        ended.add(endHold(c, c.write(), resource));
        get(r);
        ended.add(endHold(a, a.read(), resource));
        get(w2);
        assertWriterTokenAbove(b, ended);

        // A downgrade with a writer queued between the write and the read node.
        Future<Void> w3 = queued(c, c.write(), 2);
        assertTrue(b.on(() -> b.read().tryLock()));
        ended.add(endHold(b, b.write(), resource));
        ended.add(endHold(b, b.read(), resource));
        get(w3);
        assertWriterTokenAbove(c, ended);
        ended.add(endHold(c, c.write(), resource));
        assertEquals(0, resource.rejected(), "every hold's write was accepted: " + resource);
        awaitQueueSize(0);
    }

    // ------------------------------------------------------------------ session loss

    /** A reader's session expires on the server: the queued writer and reader proceed, and the reader is told once. */
    @Test
    void readerSessionLoss() throws Exception {
        Party a = party("A");
        Party w = party("W");
        Party r = party("R");
        LossRecorder lost = new LossRecorder(a, a.read());
        long token = lost.lockNow();
        Future<Void> writer = queued(w, w.write(), 2);
        Future<Void> reader = queued(r, r.read(), 3);

        SessionExpiry.expireOnServer(a.client.zooKeeper(), server.getConnectString(), WAIT);
        get(writer);
        lost.awaitToldOfLoss("the reader", token);
        assertWaitsFor(r, w);

        w.release(w.write());
        get(reader);
        a.unlock(a.read()); // after a loss: clears the thread's state, does not throw
        a.lockNow(a.read()); // the client has a new session; reads share with R
        assertTrue(r.on(() -> r.read().isHeldByCurrentThread()));
        r.release(r.read());
        a.release(a.read());
        assertEquals(1, lost.count(), "told once");
        awaitQueueSize(0);
    }

    /** A writer's session expires on the server: the queued readers hold together, and the writer is told once. */
    @Test
    void writerSessionLoss() throws Exception {
        Party a = party("A");
        Party r1 = party("R1");
        Party r2 = party("R2");
        Party w = party("W");
        LossRecorder lost = new LossRecorder(a, a.write());
        long token = lost.lockNow();
        Future<Void> f1 = queued(r1, r1.read(), 2);
        Future<Void> f2 = queued(r2, r2.read(), 3);
        Future<Void> fw = queued(w, w.write(), 4);

        SessionExpiry.expireOnServer(a.client.zooKeeper(), server.getConnectString(), WAIT);
        get(f1);
        get(f2);
        lost.awaitToldOfLoss("the writer", token);
        assertTrue(r1.on(() -> r1.read().isHeldByCurrentThread()) && r2.on(() -> r2.read().isHeldByCurrentThread()));
        assertWaitsFor(w, r2);

        r1.release(r1.read());
        r2.release(r2.read());
        get(fw);
        assertTrue(w.on(() -> w.write().fencingToken()) > token);
        w.release(w.write());
        a.unlock(a.write()); // after a loss: clears the thread's state, does not throw
        assertEquals(1, lost.count(), "told once");
        awaitQueueSize(0);
    }

    // ------------------------------------------------------------------ helpers

    /** Records the loss reports of one party's lock. */
    private static final class LossRecorder implements LockLossListener {
        private final Party party;
        private final ZkLock held;
        private final AtomicInteger count = new AtomicInteger();
        volatile ZkLock lock;
        volatile long token;

        /** Listens to the losses of {@code held}, a lock of {@code party}. */
        LossRecorder(Party party, ZkLock held) {
            this.party = party;
            this.held = held;
            held.addLossListener(this);
        }

        /** The party takes the lock; @return the hold's token */
        long lockNow() throws Exception {
            party.lockNow(held);
            return party.on(held::fencingToken);
        }

        @Override
        public void lockLost(ZkLock lock, long fencingToken) {
            this.lock = lock;
            this.token = fencingToken;
            count.incrementAndGet();
        }

        int count() {
            return count.get();
        }

        /**
         * Waits until one loss was reported ({@code who} names the party in the message); then the party
         * no longer holds, and the report names the lock and {@code heldToken}.
         */
        void awaitToldOfLoss(String who, long heldToken) throws Exception {
            Await.until(who + " is told of its loss", WAIT, () -> count() == 1);
            assertFalse(party.on(held::isHeldByCurrentThread));
            assertSame(held, lock);
            assertEquals(heldToken, token);
        }
    }

    private Party party(String name) {
        Party p = new Party(name, ZkClient.builder().connectString(server.getConnectString()).build(), path,
                events::add, WAIT);
        parties.add(p);
        return p;
    }

    /** Writes to {@code resource} with the hold's token, then releases; returns the token. */
    private long endHold(Party p, ZkLock lock, FencedResource resource) throws Exception {
        long token = p.on(lock::fencingToken);
        assertDoesNotThrow(() -> resource.write(token, p + " holds " + lock),
                () -> p + "'s write with token " + token + " refused: " + resource);
        p.release(lock);
        return token;
    }

    private static void assertWriterTokenAbove(Party writer, List<Long> ended) throws Exception {
        long token = writer.on(() -> writer.write().fencingToken());
        long highest = Collections.max(ended);
        assertTrue(token > highest, () -> writer + "'s write token " + token
                + " does not exceed the token of a hold that ended before it was granted: " + ended);
    }

    /** The lock nodes now in the directory, in queue order. */
    private List<QueueNode> queue() throws Exception {
        return LockQueue.of(admin, path);
    }

    private List<String> names() throws Exception {
        return queue().stream().map(QueueNode::name).toList();
    }

    /** {@code p} asks for {@code lock}; returns once the queue holds {@code queueSize} nodes, its own among them. */
    private Future<Void> queued(Party p, ZkLock lock, int queueSize) {
        Future<Void> acquired = p.lockLater(lock);
        awaitQueueSize(queueSize);
        return acquired;
    }

    private void awaitQueueSize(int n) {
        LockQueue.awaitSize(admin, path, n, WAIT);
    }

    /** The one node of {@code p}'s session in the queue. */
    private QueueNode nodeOf(Party p) throws Exception {
        List<QueueNode> own = new ArrayList<>();
        for (QueueNode node : queue()) {
            Stat stat = admin.zooKeeper().exists(path + "/" + node.name(), false);
            if (stat != null && stat.getEphemeralOwner() == p.client.sessionId()) {
                own.add(node);
            }
        }
        assertEquals(1, own.size(), () -> p + " should have one node in " + path + ": " + own);
        return own.get(0);
    }

    /** By the server's queue, {@code waiter} is not held and watches the node of {@code blocker}. */
    private void assertWaitsFor(Party waiter, Party blocker) throws Exception {
        io.zkcoord.queue.Turn turn = LockRule.decideFor(queue(), nodeOf(waiter));
        assertEquals(nodeOf(blocker),
                assertInstanceOf(io.zkcoord.queue.Turn.Watch.class, turn, waiter + " should be waiting").node(),
                () -> waiter + " should wait for " + blocker);
    }

    /** By the server's queue, {@code waiter} is not held. */
    private void assertBlocked(Party waiter) throws Exception {
        assertInstanceOf(io.zkcoord.queue.Turn.Watch.class, LockRule.decideFor(queue(), nodeOf(waiter)),
                () -> waiter + " should be waiting; queue " + queue0());
    }

    private List<String> queue0() {
        try {
            return names();
        } catch (Exception e) {
            return List.of(e.toString());
        }
    }

    private static <T> T call(Callable<T> task) throws Exception {
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            return get(one.submit(task));
        } finally {
            one.shutdownNow();
        }
    }

    private static <T> T get(Future<T> future) throws Exception {
        return Party.get(future, WAIT);
    }
}
