package io.zkcoord.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What a {@link CoordinationListener} is told, against a real in-process server. */
@ZkEnsemble
class CoordinationListenerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static ZkTestEnsemble ensemble;
    private static ExecutorService threads;

    @BeforeAll
    static void start(ZkTestEnsemble zk) {
        ensemble = zk;
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
    }

    /** A client of the ensemble with a short session; the test closes it. */
    private static ZkClient client() {
        return ensemble.clientBuilder().sessionTimeout(Duration.ofSeconds(4)).build();
    }

    /** Thread holds: a grant with its token, a timed-out tryLock, no event for a reentrant hold, one release. */
    @Test
    void mutexGrantTimeoutAndRelease() throws Exception {
        try (ZkClient client = client()) {
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkMutex mutex = new ZkMutex(client, "/observe/mutex");

            mutex.lock();
            long token = mutex.fencingToken();
            mutex.lock(); // reentrant: not an acquisition
            assertFalse(threads.submit(() -> mutex.tryLock(100, TimeUnit.MILLISECONDS)).get(10, TimeUnit.SECONDS));
            mutex.unlock();
            mutex.unlock();

            assertEquals(List.of(
                    "started mutex /observe/mutex THREAD",
                    "granted mutex /observe/mutex THREAD token=" + token,
                    "started mutex /observe/mutex THREAD",
                    "ended mutex /observe/mutex THREAD TIMED_OUT",
                    "released mutex /observe/mutex THREAD token=" + token), seen.lines);
            assertTrue(seen.durations.stream().noneMatch(Duration::isNegative), seen.durations::toString);
        }
    }

    /** A listener that throws from every method breaks nothing: the lock works and the others are told. */
    @Test
    void throwingListenerBreaksNothing() throws Exception {
        try (ZkClient client = client()) {
            AtomicInteger calls = new AtomicInteger();
            client.addCoordinationListener(new CoordinationListener() {
                @Override
                public void acquisitionStarted(CoordinationEvent event) {
                    calls.incrementAndGet();
                    throw new IllegalStateException("listener failure on purpose");
                }

                @Override
                public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
                    calls.incrementAndGet();
                    throw new Error("listener error on purpose");
                }

                @Override
                public void released(CoordinationEvent event, Duration held, long fencingToken) {
                    calls.incrementAndGet();
                    throw new IllegalStateException("listener failure on purpose");
                }
            });
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkMutex mutex = new ZkMutex(client, "/observe/throwing");

            mutex.lock();
            assertTrue(mutex.isHeldByCurrentThread());
            mutex.unlock();
            try (ZkLease lease = mutex.acquire()) {
                assertTrue(lease.isValid());
            }
            assertEquals(6, calls.get());
            assertEquals(6, seen.lines.size(), seen.lines::toString);
            assertEquals(List.of(), children(client, "/observe/throwing"), "no node left");
        }
    }

    /**
     * A session expired on the server: the thread hold and the lease of it are reported lost, with
     * their tokens, and the listener sees LOST then RECONNECTED.
     */
    @Test
    void holdsLostWithTheirSession() throws Exception {
        try (ZkClient client = client()) {
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkMutex mutex = new ZkMutex(client, "/observe/lost-thread");
            ZkSemaphore semaphore = new ZkSemaphore(client, "/observe/lost-lease", 2);
            mutex.lock();
            long threadToken = mutex.fencingToken();
            ZkLease lease = semaphore.acquire();

            ensemble.expireSession(client);
            Await.until(WAIT, () -> seen.lines.contains("state RECONNECTED") && seen.starting("lost").size() == 2,
                    () -> "both losses and a new session: " + seen.lines);

            assertTrue(seen.lines.contains("lost mutex /observe/lost-thread THREAD token=" + threadToken), seen.lines::toString);
            assertTrue(seen.lines.contains("lost semaphore /observe/lost-lease LEASE token=" + lease.fencingToken()),
                    seen.lines::toString);
            assertTrue(seen.lines.indexOf("state LOST") < seen.lines.indexOf("state RECONNECTED"), seen.lines::toString);
            mutex.unlock(); // a lost hold: no release is reported
            lease.release();
            assertEquals(List.of(), seen.starting("released"));
        }
    }

    /** An asynchronous acquisition whose future is cancelled ends ABANDONED; its grant-to-be is never reported. */
    @Test
    void cancelledAsyncAcquisitionIsAbandoned() throws Exception {
        try (ZkClient holder = client(); ZkClient client = client()) {
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkMutex held = new ZkMutex(holder, "/observe/async");
            held.lock();
            CompletableFuture<ZkLease> pending = new ZkMutex(client, "/observe/async").acquireAsync();
            Await.until(WAIT, () -> seen.lines.size() == 1, () -> "started: " + seen.lines);
            pending.cancel(false);
            held.unlock();
            Await.until(WAIT, () -> seen.lines.size() == 2, () -> "ended: " + seen.lines);
            assertEquals(List.of("started mutex /observe/async LEASE", "ended mutex /observe/async LEASE ABANDONED"),
                    seen.lines);
            Await.until(WAIT, () -> children(client, "/observe/async").isEmpty(), "no node left");
            assertEquals(2, seen.lines.size(), seen.lines::toString);
        }
    }

    /** A leadership is a hold of the election path: granted with its epoch, released by close(). */
    @Test
    void leadershipIsAHold() throws Exception {
        try (ZkClient client = client()) {
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkLeaderElection election = new ZkLeaderElection(client, "/observe/election", "p1");
            election.start();
            assertTrue(election.awaitLeadership(WAIT));
            long epoch = election.epoch();
            election.close();
            Await.until(WAIT, () -> seen.lines.size() == 3, () -> "three calls: " + seen.lines);
            assertEquals(List.of(
                    "started election /observe/election PARTICIPANT",
                    "granted election /observe/election PARTICIPANT token=" + epoch,
                    "released election /observe/election PARTICIPANT token=" + epoch), seen.lines);
        }
    }

    /**
     * A leader whose session expires: the election's calls strictly alternate, a wait started, then
     * granted, then the hold ended (released on SUSPENDED, or lost), before the next wait starts,
     * until the leadership of the new session is granted with a larger epoch.
     */
    @Test
    void leadershipCallsAlternateAcrossASessionLoss() throws Exception {
        String path = "/observe/election-lost";
        try (ZkClient client = client()) {
            RecordingListener seen = new RecordingListener();
            client.addCoordinationListener(seen);
            ZkLeaderElection election = new ZkLeaderElection(client, path, "p1");
            election.start();
            assertTrue(election.awaitLeadership(WAIT));
            long epoch = election.epoch();
            ensemble.expireSession(client);
            Await.until(WAIT, () -> election.isLeader() && election.epoch() > epoch, "leading again in a new session");
            Await.until(WAIT, () -> seen.lines.stream().filter(l -> l.startsWith("granted election")).count() == 2,
                    () -> "two grants: " + seen.lines);
            List<String> calls = seen.lines.stream().filter(l -> l.contains("election " + path)).map(l -> l.split(" ")[0])
                    .toList();
            for (int i = 0; i < calls.size(); i++) {
                String expected = switch (i % 3) {
                    case 0 -> "started";
                    case 1 -> "granted";
                    default -> calls.get(i).equals("lost") ? "lost" : "released";
                };
                assertEquals(expected, calls.get(i), "call " + i + " of " + seen.lines);
            }
            assertEquals(5, calls.size(), seen.lines::toString);
            election.close();
        }
    }

    /** @return the children of {@code path}; none if it is gone (a last release removes its directory) */
    private static List<String> children(ZkClient client, String path) {
        try {
            return client.zooKeeper().getChildren(path, false);
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new AssertionError("cannot list " + path, e);
        }
    }

    /** Registration checks its argument and the client's state. */
    @Test
    void registrationIsChecked() {
        ZkClient client = client();
        assertThrows(IllegalArgumentException.class, () -> client.addCoordinationListener(null));
        client.close();
        assertThrows(IllegalStateException.class, () -> client.addCoordinationListener(new RecordingListener()));
    }
}
