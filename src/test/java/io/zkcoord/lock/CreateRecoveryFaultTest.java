package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.faults.InvariantChecker;
import io.zkcoord.faults.LockThread;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scenario 4: the connection drops right after the lock node's create reached the server, so the
 * server made the node but the client never got the reply ({@link ZkProxy#cutAfterNextCreate()}).
 *
 * <p>It lives in {@code io.zkcoord.lock} because its second half switches the recovery off through
 * the package-private {@link io.zkcoord.queue.QueueDirectory#recoverLostCreates}, to show the first half would catch its
 * absence.
 */
class CreateRecoveryFaultTest {

    private static final Logger log = LoggerFactory.getLogger(CreateRecoveryFaultTest.class);

    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** How long the broken variant watches an exclusive lock not being granted behind its own orphan. */
    private static final Duration BLOCKED = Duration.ofSeconds(2);

    /** The side of a lock that the client under test takes, and the exclusive side its rival tries. */
    enum Kind {
        MUTEX, READ, WRITE;

        ZkLock of(ZkClient client, String dir) {
            switch (this) {
                case MUTEX:
                    return new ZkMutex(client, dir);
                case READ:
                    return new ZkReadWriteLock(client, dir).readLock();
                default:
                    return new ZkReadWriteLock(client, dir).writeLock();
            }
        }

        /** An exclusive lock on the same directory: it gets in at once only if nothing is left there. */
        ZkLock rival(ZkClient client, String dir) {
            return this == MUTEX ? new ZkMutex(client, dir) : new ZkReadWriteLock(client, dir).writeLock();
        }
    }

    @RegisterExtension
    static final FaultFixtures.ObservedServer server = new FaultFixtures.ObservedServer(500, SESSION);

    @AfterAll
    static void restoreRecovery() {
        io.zkcoord.queue.QueueDirectory.recoverLostCreates = true;
    }

    static Stream<Arguments> kindsTwice() {
        return Stream.of(Kind.values()).flatMap(k -> IntStream.rangeClosed(1, 2).mapToObj(run -> Arguments.of(k, run)));
    }

    /**
     * After a create whose reply was lost, the client adopts the node the server made (exactly one node of
     * its session, and it holds the lock); after unlock the directory is empty and a rival acquires at once.
     * Run 1: a directory the client knows (the lost request is the plain create). Run 2: a fresh key (the
     * lost request is the one transaction that makes the directory and the node).
     */
    @ParameterizedTest(name = "{0} run {1}")
    @MethodSource("kindsTwice")
    void adoptsTheNodeOfALostCreate(Kind kind, int run) throws Exception {
        String dir = "/faults/create-" + kind + "-" + System.nanoTime();
        boolean freshKey = run == 2;
        if (!freshKey) {
            FaultFixtures.createPath(server.observer(), dir);
        } else {
            FaultFixtures.createPath(server.observer(), "/faults");
        }
        InvariantChecker checker = new InvariantChecker("S4 lost create reply, " + kind);
        try (ZkProxy proxy = ZkProxy.to(server.connectString());
             ZkClient a = FaultFixtures.client(proxy.connectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             LockThread holder = new LockThread("s4-holder")) {
            FaultFixtures.StateLog states = FaultFixtures.StateLog.of(a);
            long session = a.sessionId();
            ZkLock lock = checker.tracked(kind.of(a, dir));
            if (!freshKey) {
                knowTheDirectory(kind.of(a, dir)); // so the next create is the lock node's own
            }
            CompletableFuture<Void> cut = proxy.cutAfterNextCreate();

            InvariantChecker.Entry entry = holder.call(() -> {
                assertTrue(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS), "acquires despite the lost reply");
                InvariantChecker.Entry e = checker.enter("A", lock.fencingToken(), mode(kind));
                assertTrue(checker.write(e));
                return e;
            });
            cut.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(states.states().contains(ConnectionState.SUSPENDED), "the connection was cut: " + states.states());
            assertEquals(session, a.sessionId(), "same session: the node the server made is still ours");

            List<String> ours = FaultFixtures.nodesOf(server.observer(), dir, session);
            assertEquals(1, ours.size(), "exactly one node of the client: " + ours);
            Stat node = server.observer().exists(dir + "/" + ours.get(0), false);
            assertEquals(node.getCzxid(), entry.token(), "the client holds with the node the server made");
            assertTrue(holder.call(lock::isHeldByCurrentThread));

            holder.call(FaultFixtures.leaveAndUnlock(checker, entry, lock));
            assertEquals(List.of(), InvariantChecker.children(server.observer(), dir), "nothing left after unlock");

            ZkLock rival = kind.rival(b, dir);
            long released = System.nanoTime();
            assertTrue(rival.tryLock(), "a rival acquires at once");
            InvariantChecker.Entry second = checker.enter("B", rival.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
            log.info("S4 {}: rival acquired {} us after the release", kind, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - released));
            checker.write(second);
            checker.leave(second);
            rival.unlock();
            checker.assertDirectoryEmpty(server.observer(), dir, WAIT);
            checker.assertNoViolations();
        }
    }

    /**
     * With the recovery switched off, the same lost create reply leaves an orphan: an exclusive lock waits
     * behind its own orphan, a reader holds with two nodes; after the hold or the wait ends the orphan stays
     * and a rival cannot get in. So {@link #adoptsTheNodeOfALostCreate} does catch a missing recovery.
     *
     * <p>Every wait here is for a condition (the reconnection can take seconds on a busy machine); the one
     * bounded observation, "the exclusive lock is not granted", starts only once both of the client's nodes
     * exist, so a slow machine can only make it easier to pass, never fail it.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void withoutTheRecoveryALostCreateLeavesAnOrphan(Kind kind) throws Exception {
        String dir = "/faults/orphan-" + kind + "-" + System.nanoTime();
        FaultFixtures.createPath(server.observer(), dir);
        io.zkcoord.queue.QueueDirectory.recoverLostCreates = false;
        try (ZkProxy proxy = ZkProxy.to(server.connectString());
             ZkClient a = FaultFixtures.client(proxy.connectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.connectString(), SESSION);
             LockThread holder = new LockThread("s4-broken-holder")) {
            long session = a.sessionId();
            ZkLock lock = kind.of(a, dir);
            knowTheDirectory(kind.of(a, dir)); // so the next create is the lock node's own
            CompletableFuture<Void> cut = proxy.cutAfterNextCreate();

            if (kind == Kind.READ) {
                int nodesWhileHeld = holder.call(() -> {
                    assertTrue(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                            "a reader is not blocked by its orphan: it holds once the client has reconnected");
                    try {
                        return FaultFixtures.nodesOf(server.observer(), dir, session).size();
                    } finally {
                        lock.unlock();
                    }
                });
                cut.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                log.info("S4 broken {}: nodes of the client while held={}", kind, nodesWhileHeld);
                assertEquals(2, nodesWhileHeld, "a reader is not blocked by its orphan, but holds with two nodes");
            } else {
                CompletableFuture<ZkLease> pending = lock.acquireAsync();
                cut.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                Await.until("the client made a second node behind its orphan", WAIT,
                        () -> FaultFixtures.nodesOf(server.observer(), dir, session).size() == 2);
                Await.holds("an exclusive lock waits behind its own orphan", BLOCKED, () -> !pending.isDone());
                pending.cancel(true);
                log.info("S4 broken {}: waited behind the orphan, gave up", kind);
            }
            Await.until("only the orphan stays once the hold or the wait is over", WAIT,
                    () -> FaultFixtures.nodesOf(server.observer(), dir, session).size() == 1);
            assertFalse(kind.rival(b, dir).tryLock(), "the orphan keeps a rival out");
        } finally {
            io.zkcoord.queue.QueueDirectory.recoverLostCreates = true;
        }
        // Closing the client ended its session, and the orphan went with it.
        assertEquals(List.of(), InvariantChecker.children(server.observer(), dir));
    }

    private static InvariantChecker.Mode mode(Kind kind) {
        return kind == Kind.READ ? InvariantChecker.Mode.SHARED : InvariantChecker.Mode.EXCLUSIVE;
    }

    /**
     * Takes and releases {@code lock} once, so that its client knows the (user-made, persistent)
     * directory exists and queues there with a plain create, not the transaction that would make it.
     */
    private static void knowTheDirectory(ZkLock lock) throws InterruptedException {
        assertTrue(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        lock.unlock();
    }
}
