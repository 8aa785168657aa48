package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.faults.InvariantChecker;
import io.zkcoord.faults.PermitLedger;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.apache.zookeeper.ZooKeeper;

/**
 * Every client of a list uses four recipes at once, until {@link #stop}: a thread in mutex cycles,
 * a thread in read/write-lock cycles (one in four a write), a thread in semaphore cycles (2
 * permits), and an election participant. What each hold must guarantee is checked as it happens:
 *
 * <ul>
 *   <li>the mutex and the read/write lock by an {@link InvariantChecker} each: no two exclusive
 *       holders (no writer beside anyone), every exclusive holder writes to a fenced resource with
 *       its token, which refuses a token lower than one it accepted;
 *   <li>the semaphore by a {@link PermitLedger}: never more than 2 leases inside;
 *   <li>the election by an {@link InvariantChecker} too, with the epoch as the token: no two leaders
 *       at once, each new leader writes with its epoch to a fenced resource (so epochs must grow),
 *       and one participant per epoch.
 * </ul>
 * The checkers excuse an overlap only when one of the holds was reported lost (a loss listener, a
 * lease's {@code whenLost}, or, for the election, the participant's client reporting
 * {@code LOST}): a session ended on the server hands its holds on before its owner can hear of
 * it, which is what fencing is for.
 *
 * <p>A worker that cannot reach ZooKeeper within the client's retry policy fails the run, unless
 * its client's session was lost (its acquisition then failed with the session).
 *
 * <p>Thread-safe.
 */
final class RecipeWorkload {

    static final String MUTEX = "/tls-ensemble/mutex";
    static final String READ_WRITE = "/tls-ensemble/read-write";
    static final String SEMAPHORE = "/tls-ensemble/semaphore";
    static final String ELECTION = "/tls-ensemble/election";
    static final int PERMITS = 2;
    /** Time spent inside per cycle, so that readers share and the semaphore's permits are both taken. */
    private static final long HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    final InvariantChecker mutex = new InvariantChecker("mutex over TLS");
    final InvariantChecker readWrite = new InvariantChecker("read/write lock over TLS");
    final PermitLedger semaphore = new PermitLedger("semaphore over TLS", PERMITS);
    final InvariantChecker election = new InvariantChecker("election over TLS");

    private final List<ZkClient> clients;
    private final List<ZkMutex> mutexes = new ArrayList<>();
    private final List<FaultFixtures.StateLog> states = new ArrayList<>();
    private final List<ZkLeaderElection> elections = new ArrayList<>();
    private final List<Runnable> cycles = new ArrayList<>();
    /** Grants of every recipe, per client. */
    private final AtomicIntegerArray grants;
    private final ExecutorService workers;
    private final List<Future<?>> work = new ArrayList<>();
    private final long start = System.nanoTime();
    private volatile boolean stopping;

    // guarded by this
    private final Map<Long, String> epochOwners = new HashMap<>();
    private final List<String> epochsShared = new ArrayList<>();
    private final List<String> tolerated = new ArrayList<>();
    private final InvariantChecker.Entry[] leading;
    /** The last epoch each participant was elected with: lost with its client's session. */
    private final long[] lastEpoch;
    private long highestEpoch = -1;

    RecipeWorkload(List<ZkClient> clients, long seed) {
        this.clients = List.copyOf(clients);
        this.grants = new AtomicIntegerArray(clients.size());
        this.leading = new InvariantChecker.Entry[clients.size()];
        this.lastEpoch = new long[clients.size()];
        Arrays.fill(lastEpoch, -1);
        this.workers = Executors.newFixedThreadPool(3 * clients.size());
        for (int i = 0; i < clients.size(); i++) {
            int me = i;
            String name = "client-" + i;
            ZkClient client = clients.get(i);
            states.add(FaultFixtures.StateLog.of(client));
            client.addConnectionListener(state -> {
                if (state == ConnectionState.LOST) {
                    sessionLost(me);
                }
            });
            ZkMutex m = mutex.tracked(new ZkMutex(client, MUTEX));
            mutexes.add(m);
            ZkReadWriteLock rw = new ZkReadWriteLock(client, READ_WRITE);
            readWrite.tracked(rw.readLock());
            readWrite.tracked(rw.writeLock());
            ZkSemaphore s = new ZkSemaphore(client, SEMAPHORE, PERMITS);
            Random random = new Random(seed + i);
            cycles.add(() -> lockCycle(mutex, me, m, true));
            cycles.add(() -> {
                boolean write = random.nextInt(4) == 0;
                lockCycle(readWrite, me, write ? rw.writeLock() : rw.readLock(), write);
            });
            cycles.add(() -> semaphoreCycle(me, s));
            ZkLeaderElection e = new ZkLeaderElection(client, ELECTION, name);
            e.addListener(participant(me));
            elections.add(e);
        }
    }

    /** Starts every worker thread and every participant. */
    void start() {
        for (int c = 0; c < cycles.size(); c++) {
            int client = c / 3;
            Runnable cycle = cycles.get(c);
            work.add(workers.submit(() -> {
                while (!stopping) {
                    try {
                        cycle.run();
                    } catch (CoordinationException e) {
                        // Only an acquisition that failed with its session is excused.
                        if (states.get(client).firstAt(ConnectionState.LOST, start) < 0) {
                            throw e;
                        }
                        tolerated(client, e);
                    }
                }
                return null;
            }));
        }
        elections.forEach(ZkLeaderElection::start);
    }

    private synchronized void tolerated(int client, CoordinationException e) {
        tolerated.add("client-" + client + ": " + e);
    }

    /** @return the failures excused because the client's session was lost */
    synchronized List<String> tolerated() {
        return List.copyOf(tolerated);
    }

    private void lockCycle(InvariantChecker checker, int client, ZkLock lock, boolean exclusive) {
        checker.cycle("client-" + client, lock, exclusive, HOLD_NANOS, () -> grants.incrementAndGet(client));
    }

    private void semaphoreCycle(int client, ZkSemaphore s) {
        ZkLease lease;
        try {
            lease = s.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        PermitLedger.Holding h = semaphore.enter("client-" + client, lease);
        grants.incrementAndGet(client);
        LockSupport.parkNanos(HOLD_NANOS);
        semaphore.leave(h);
        lease.release();
    }

    /** A hold of the mutex by a lease of one client, beside its workers, entered and written with. */
    record LeaseHold(ZkLease lease, InvariantChecker.Entry entry) {
    }

    /**
     * Takes the mutex with a lease of client {@code i} (queued behind the workers), enters the
     * mutex's checker and writes to its fenced resource. The mutex's workers wait until it ends.
     */
    LeaseHold holdMutex(int i) throws InterruptedException {
        ZkLease lease = mutexes.get(i).acquire();
        InvariantChecker.Entry e = mutex.enter("client-" + i + " lease", lease.fencingToken(),
                InvariantChecker.Mode.EXCLUSIVE);
        grants.incrementAndGet(i);
        assertTrue(mutex.write(e), "the lease's first write is accepted");
        return new LeaseHold(lease, e);
    }

    private LeadershipListener participant(int i) {
        return new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                InvariantChecker.Entry e = election.enter("p" + i, epoch, InvariantChecker.Mode.EXCLUSIVE);
                synchronized (RecipeWorkload.this) {
                    String owner = epochOwners.putIfAbsent(epoch, "p" + i);
                    if (owner != null && !owner.equals("p" + i)) {
                        epochsShared.add("epoch " + epoch + " led by " + owner + " and p" + i);
                    }
                    leading[i] = e;
                    lastEpoch[i] = epoch;
                    highestEpoch = Math.max(highestEpoch, epoch);
                }
                grants.incrementAndGet(i);
                election.write(e); // refused if a higher epoch was accepted before: epochs must grow
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                InvariantChecker.Entry e;
                synchronized (RecipeWorkload.this) {
                    e = leading[i];
                    leading[i] = null;
                }
                if (reason == RevokeReason.LOST) {
                    election.lost(epoch);
                }
                if (e != null) {
                    election.leave(e);
                }
            }
        };
    }

    /** The session of client {@code i} ended: so did a leadership it held in it, whether told or not. */
    private void sessionLost(int i) {
        long epoch;
        synchronized (this) {
            epoch = lastEpoch[i];
        }
        if (epoch >= 0) {
            election.lost(epoch);
        }
    }

    /** Marks a fault in every checker, so that each measures its recovery. */
    void fault(String what) {
        mutex.fault(what);
        readWrite.fault(what);
        semaphore.fault(what);
        election.fault(what);
    }

    /** @return the grants so far of each recipe: mutex, read/write, semaphore, election */
    int[] progress() {
        return new int[] {mutex.acquisitions(), readWrite.acquisitions(), semaphore.entries(), election.acquisitions()};
    }

    /** @return the grants of any recipe to client {@code i} so far */
    int grants(int i) {
        return grants.get(i);
    }

    /** @return the connection states client {@code i} reported */
    FaultFixtures.StateLog states(int i) {
        return states.get(i);
    }

    /** @return the index of the client whose participant leads now, or -1 */
    int leader() {
        for (int i = 0; i < elections.size(); i++) {
            if (elections.get(i).isLeader()) {
                return i;
            }
        }
        return -1;
    }

    /** @return the epoch of participant {@code i}'s leadership (it must lead) */
    long epoch(int i) {
        return elections.get(i).epoch();
    }

    /** @return the highest epoch any participant was elected with */
    synchronized long highestEpoch() {
        return highestEpoch;
    }

    /**
     * Stops the workers after their current cycle, waits for them (a worker's failure is rethrown),
     * closes the participants and waits until every recipe's directory is empty.
     *
     * @throws AssertionError if a worker failed or still runs after {@code within}, or a directory
     *     still holds a node after {@code within}
     */
    void stop(Duration within) throws InterruptedException {
        stopping = true;
        long deadline = System.nanoTime() + within.toNanos();
        try {
            for (Future<?> f : work) {
                try {
                    f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError(work.stream().filter(w -> !w.isDone()).count() + " worker(s) still"
                            + " running " + within.toMillis() + " ms after the stop; " + summary());
                } catch (ExecutionException e) {
                    throw new AssertionError("a worker failed: " + e.getCause() + "; " + summary(), e.getCause());
                }
            }
        } finally {
            workers.shutdownNow();
            elections.forEach(ZkLeaderElection::close);
        }
        ZooKeeper look = clients.get(0).zooKeeper();
        for (String dir : List.of(MUTEX, READ_WRITE, SEMAPHORE, ELECTION)) {
            Await.until(within, () -> InvariantChecker.children(look, dir).isEmpty(),
                    () -> dir + " still holds " + InvariantChecker.children(look, dir));
        }
    }

    /** @return every checker's summary, for messages */
    String summary() {
        return String.join("; ", mutex.summary(), readWrite.summary(), semaphore.summary(), election.summary());
    }

    /** @throws AssertionError naming every broken invariant of every recipe */
    void assertNoViolations() {
        mutex.assertNoViolations();
        readWrite.assertNoViolations();
        semaphore.assertNoViolations();
        election.assertNoViolations();
        synchronized (this) {
            assertTrue(epochsShared.isEmpty(), "one leader per epoch: " + epochsShared);
        }
    }

    /** Closes the participants and stops the workers, if {@link #stop} did not; for clean-up after a failure. */
    void abandon() {
        stopping = true;
        workers.shutdownNow();
        elections.forEach(ZkLeaderElection::close);
    }
}
