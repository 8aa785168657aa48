package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.concurrent.Future;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;

/**
 * Scenario 2: the holder's session is expired on the server in the middle of its critical section.
 */
class SessionExpiryFaultTest {

    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestingServer server;
    private static ZkClient observer;

    @BeforeAll
    static void start() throws Exception {
        server = FaultFixtures.server(500);
        observer = FaultFixtures.client(server.getConnectString(), SESSION);
    }

    @AfterAll
    static void stop() throws Exception {
        if (observer != null) {
            observer.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /**
     * Expiring the holder's session on the server hands the lock to the next waiter; the old holder is told
     * (listener, {@code isHeldByCurrentThread()} false) and its late write with the old token is refused; a
     * second thread of the old holder's client, queued when the session expired, queues again in the new
     * session and gets the lock after the new holder.
     */
    @RepeatedTest(3)
    void expiredHolderIsToldAndFenced() throws Exception {
        expiredHolderIsToldAndFencedOnce();
    }

    /** Soak: the session-expiry scenario, many more times. */
    @Tag("soak")
    @RepeatedTest(20)
    void expiredHolderIsToldAndFencedSoak() throws Exception {
        expiredHolderIsToldAndFencedOnce();
    }

    private void expiredHolderIsToldAndFencedOnce() throws Exception {
        String dir = "/faults/expiry-" + System.nanoTime();
        InvariantChecker checker = new InvariantChecker("S2 session expiry");
        try (ZkClient a = FaultFixtures.client(server.getConnectString(), SESSION);
             ZkClient b = FaultFixtures.client(server.getConnectString(), SESSION);
             LockThread holder = new LockThread("s2-holder");
             LockThread waiter = new LockThread("s2-waiter");
             LockThread sibling = new LockThread("s2-sibling")) {
            ZkMutex ma = new ZkMutex(a, dir);
            ZkMutex mb = new ZkMutex(b, dir);
            ma.addLossListener(checker.lossListener());
            mb.addLossListener(checker.lossListener());
            long oldSession = a.sessionId();

            InvariantChecker.Entry ea = holder.call(() -> {
                ma.lock();
                InvariantChecker.Entry e = checker.enter("A", ma.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
                assertTrue(checker.write(e), "first write of the holder");
                return e;
            });
            Future<InvariantChecker.Entry> fb = waiter.submit(() -> {
                mb.lock();
                InvariantChecker.Entry e = checker.enter("B", mb.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
                assertTrue(checker.write(e), "write of the next holder");
                return e;
            });
            Await.until("B queued behind A", WAIT, () -> InvariantChecker.children(observer.zooKeeper(), dir).size() == 2);
            // A second thread of A's client, queued behind B: it must queue again in A's next session.
            Future<InvariantChecker.Entry> fa2 = sibling.submit(() -> {
                ma.lock();
                return checker.enter("A2", ma.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
            });
            Await.until("A2 queued behind B", WAIT, () -> InvariantChecker.children(observer.zooKeeper(), dir).size() == 3);

            checker.fault("session of A expired on the server");
            SessionExpiry.expireOnServer(a.zooKeeper(), server.getConnectString(), WAIT);
            InvariantChecker.Entry eb = waiter.await(fb, WAIT);
            assertTrue(eb.token() > ea.token(), "tokens grow from one holder to the next");

            Await.until("A told of its loss", WAIT, () -> checker.lossReported(ea.token()));
            assertFalse(holder.call(ma::isHeldByCurrentThread), "A must not believe it holds the lock");
            assertEquals(ea.token(), (long) holder.call(ma::fencingToken), "the old token stays readable");
            assertFalse(holder.call(() -> checker.write(ea)), "the late write of A must be refused");
            holder.call(() -> {
                checker.leave(ea);
                ma.unlock();
                return null;
            });
            waiter.call(() -> {
                checker.leave(eb);
                mb.unlock();
                return null;
            });
            InvariantChecker.Entry ea2 = sibling.await(fa2, WAIT);
            assertTrue(ea2.token() > eb.token(), "A2 queued again, behind B");
            assertTrue(sibling.call(ma::isHeldByCurrentThread));
            sibling.call(() -> {
                checker.leave(ea2);
                ma.unlock();
                return null;
            });

            Await.until("A in a new session", WAIT, () -> a.state() == ConnectionState.RECONNECTED);
            assertNotEquals(oldSession, a.sessionId());

            checker.assertDirectoryEmpty(observer.zooKeeper(), dir, WAIT);
            assertEquals(1, checker.refusedWrites());
            checker.assertNoViolations();
        }
    }
}
