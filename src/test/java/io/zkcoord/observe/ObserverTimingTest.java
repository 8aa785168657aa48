package io.zkcoord.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Coordination listeners: never on ZooKeeper's threads; a hold's time counts from its grant, slow listeners included. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ZkEnsemble
class ObserverTimingTest {

    private static final Duration WAIT = Duration.ofSeconds(15);
    private static ZkTestEnsemble ensemble;

    @BeforeAll
    static void start(ZkTestEnsemble zk) {
        ensemble = zk;
    }

    /** A client of the ensemble with a short session; the test closes it. */
    private static ZkClient client() {
        return ensemble.clientBuilder().sessionTimeout(Duration.ofSeconds(4)).build();
    }

    /**
     * The hold begins when the lock is granted; a slow acquisitionGranted listener runs inside the
     * hold (the caller cannot release before lock() returns). The reported hold time must cover it:
     * a hold that lasted at least 300 ms must not be reported as a few ms.
     */
    @Test
    void holdTimeCoversTheWholeHold() throws Exception {
        try (ZkClient client = client()) {
            List<Duration> held = new CopyOnWriteArrayList<>();
            client.addCoordinationListener(new CoordinationListener() {
                @Override
                public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                    while (System.nanoTime() < until) {
                        LockSupport.parkNanos(until - System.nanoTime()); // a slow metrics back end
                    }
                }

                @Override
                public void released(CoordinationEvent event, Duration h, long fencingToken) {
                    held.add(h);
                }
            });
            ZkMutex mutex = new ZkMutex(client, "/review/observe/hold-time");
            long before = System.nanoTime();
            mutex.lock();
            mutex.unlock();
            long whole = System.nanoTime() - before;
            assertEquals(1, held.size(), held::toString);
            assertTrue(whole >= TimeUnit.MILLISECONDS.toNanos(300), "the hold lasted at least 300 ms");
            assertTrue(held.get(0).compareTo(Duration.ofMillis(300)) >= 0,
                    "a hold of at least 300 ms (lock() to unlock()) reported as " + held.get(0));
        }
    }

    /**
     * No listener call runs on ZooKeeper's own threads (its event thread or send thread): thread
     * holds, asynchronous leases, a lease lost with an expired session, state changes, leadership.
     */
    @Test
    void neverOnZooKeeperThreads() throws Exception {
        try (ZkClient client = client()) {
            List<String> threads = new CopyOnWriteArrayList<>();
            List<String> calls = new CopyOnWriteArrayList<>();
            client.addCoordinationListener(new CoordinationListener() {
                private void note(String what) {
                    calls.add(what);
                    threads.add(what + " on " + Thread.currentThread().getName());
                }

                @Override
                public void acquisitionStarted(CoordinationEvent event) {
                    note("started " + event.recipe());
                }

                @Override
                public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
                    note("granted " + event.recipe());
                }

                @Override
                public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
                    note("ended " + event.recipe());
                }

                @Override
                public void released(CoordinationEvent event, Duration held, long fencingToken) {
                    note("released " + event.recipe());
                }

                @Override
                public void lost(CoordinationEvent event, Duration held, long fencingToken) {
                    note("lost " + event.recipe());
                }

                @Override
                public void sessionStateChanged(ConnectionState state) {
                    note("state " + state);
                }
            });
            ZkMutex mutex = new ZkMutex(client, "/review/observe/threads");
            mutex.lock();
            mutex.unlock();
            ZkLease async = new ZkMutex(client, "/review/observe/threads-async").acquireAsync().get(15, TimeUnit.SECONDS);
            async.release();
            ZkLease lease = new ZkSemaphore(client, "/review/observe/threads-sem", 1).acquire();
            ZkLeaderElection election = new ZkLeaderElection(client, "/review/observe/threads-election", "p");
            election.start();
            assertTrue(election.awaitLeadership(WAIT));
            ensemble.expireSession(client);
            Await.until(WAIT, () -> calls.contains("state RECONNECTED") && calls.contains("lost SEMAPHORE"),
                    () -> "a loss and a new session: " + calls);
            election.close();
            lease.release();
            assertTrue(threads.stream().noneMatch(t -> t.contains("EventThread") || t.contains("SendThread")),
                    threads::toString);
        }
    }
}
