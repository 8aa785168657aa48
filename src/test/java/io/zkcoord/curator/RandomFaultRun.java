package io.zkcoord.curator;

import io.zkcoord.LockLostException;
import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.curator.Contender.Library;
import io.zkcoord.curator.FaultLedger.Hold;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A mixed fleet (two Curator {@code InterProcessMutex} parties, two {@code ZkMutex(CURATOR)}
 * parties, each in its own session behind its own {@link ZkProxy}) contending on one path for a
 * number of entries, while a schedule drawn from a seed cuts connections and ends sessions on the
 * server. The {@link FaultLedger} judges every overlap.
 *
 * <p><b>The schedule.</b> Faults are keyed to entry numbers, not to time: the seed gives, fault by
 * fault, the entry at which it fires (gaps of {@code minGap..maxGap} entries), its kind (cut or
 * expiry, even odds) and its target (the party inside, half the time; otherwise any party, waiters
 * included). The party that makes that entry injects the fault from inside the section; a holder
 * whose own session it ended stays inside until the next party enters, or (zkcoord) until it is
 * told, or 3 s pass, so that the stale holder and the next one can meet. The same seed replays the
 * same schedule; the threads' interleaving is the machine's.
 *
 * <p>Not thread-safe: made and run by one test thread.
 */
final class RandomFaultRun {

    private static final Logger LOG = LoggerFactory.getLogger(RandomFaultRun.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long LINGER_MS = 3_000;

    /** What one run found. */
    record Outcome(long seed, long entries, long cuts, long expiries, long skipped, long overlaps,
            int staleCurator, int staleOurs, long staleOursRefused, List<String> ours, List<String> curators,
            long lockFailures) {
        String summary() {
            return "mixed random faults: seed=" + seed + " (replay with -Dmixed.faults.seed=" + seed + "), "
                    + entries + " entries, " + (cuts + expiries) + " faults injected (" + cuts + " connection cuts, "
                    + expiries + " session expiries; " + skipped + " skipped: no session to end); " + overlaps
                    + " entries met a stale holder inside (overlaps), from " + (staleCurator + staleOurs)
                    + " stale holds: " + staleCurator + " Curator's (not told: Curator's fault), " + staleOurs
                    + " zkcoord's (each must be told, or it is a fault of ours; " + staleOursRefused + " of their guarded commits"
                    + " refused); " + lockFailures + " lock, commit or release calls failed under the faults;"
                    + " faults of ours: " + ours + "; Curator's faults recorded: " + curators.size();
        }
    }

    /** A Curator mutex that shows the node of the current thread's hold. */
    private static final class ShownMutex extends InterProcessMutex {
        ShownMutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String nodePath() {
            return getLockPath();
        }
    }

    /** One party: its client behind its own proxy, and its lock. */
    private final class Party {
        final String name;
        final Library library;
        final ZkProxy proxy;
        CuratorFramework curator;
        ShownMutex curatorMutex;
        ZkClient zkcoord;
        ZkMutex zkMutex;

        Party(String name, Library library, String serverConnect) throws Exception {
            this.name = name;
            this.library = library;
            this.proxy = ZkProxy.to(serverConnect);
            if (library == Library.CURATOR) {
                curator = fleet.curator(proxy.connectString());
                curatorMutex = new ShownMutex(curator, dir);
            } else {
                zkcoord = fleet.zkcoord(proxy.connectString());
                zkMutex = new ZkMutex(zkcoord, dir, Protocol.CURATOR);
                zkMutex.addLossListener((lock, token) -> told.add(token));
            }
        }

        ZooKeeper handle() throws Exception {
            return library == Library.CURATOR ? curator.getZookeeperClient().getZooKeeper() : zkcoord.zooKeeper();
        }

        void lock() throws Exception {
            if (library == Library.CURATOR) {
                curatorMutex.acquire();
            } else {
                zkMutex.lock();
            }
        }

        Hold hold(long entry) {
            return library == Library.CURATOR ? new Hold(name, library, curatorMutex.nodePath(), -1, entry)
                    : new Hold(name, library, null, zkMutex.fencingToken(), entry);
        }

        void unlock() throws Exception {
            if (library == Library.CURATOR) {
                curatorMutex.release();
            } else {
                zkMutex.unlock();
            }
        }

        /** The work of a stay: for zkcoord, a commit guarded by the hold (a stale one must be refused). */
        void work(Hold h) {
            if (library != Library.ZKCOORD) {
                return;
            }
            boolean staleBefore = ledger.judgedStale(h);
            try {
                zkMutex.commitIfHeld(List.of(Op.check(dir, -1)));
                if (staleBefore) {
                    ledger.ours("guarded commit of " + h + " applied after it was judged stale");
                }
            } catch (LockLostException refused) {
                if (ledger.judgedStale(h)) {
                    staleRefused.incrementAndGet();
                }
            } catch (RuntimeException outcomeUnknownOrUnreachable) {
                lockFailures.incrementAndGet();
            }
        }

        void run() throws Exception {
            while (!stop.get()) {
                try {
                    lock();
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    lockFailures.incrementAndGet(); // unreachable within the retry policy: try again
                    continue;
                }
                try {
                    Hold h = ledger.enter(this::hold);
                    if (h.entry() >= cycles) {
                        stop.set(true);
                    }
                    inject(this, h);
                    work(h);
                    ledger.leave(h);
                } finally {
                    try {
                        unlock();
                    } catch (Exception e) {
                        lockFailures.incrementAndGet(); // the release of a hold whose session ended
                    }
                }
            }
        }
    }

    private final long seed;
    private final Random random;
    private final int cycles;
    private final int minGap;
    private final int maxGap;
    private final String serverConnect;
    private final String dir;
    private final Fleet fleet;
    private final FaultLedger ledger;
    private final List<Party> parties = new ArrayList<>();
    private final Set<Long> told = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong lockFailures = new AtomicLong();
    private final AtomicLong staleRefused = new AtomicLong();
    private long nextFault;
    private long cuts;
    private long expiries;
    private long skipped;

    RandomFaultRun(String serverConnect, String dir, long seed, int cycles, int minGap, int maxGap, Fleet fleet)
            throws Exception {
        this.seed = seed;
        this.random = new Random(seed);
        this.cycles = cycles;
        this.minGap = minGap;
        this.maxGap = maxGap;
        this.serverConnect = serverConnect;
        this.dir = dir;
        this.fleet = fleet;
        ZkClient look = fleet.zkcoord(serverConnect);
        this.ledger = new FaultLedger(look.zooKeeper(), dir);
        this.nextFault = gap();
    }

    private long gap() {
        return minGap + random.nextInt(maxGap - minGap + 1);
    }

    /** Runs the fleet until {@code cycles} entries; returns what the ledger found. */
    Outcome run() throws Exception {
        Library[] sides = {Library.CURATOR, Library.CURATOR, Library.ZKCOORD, Library.ZKCOORD};
        for (int i = 0; i < sides.length; i++) {
            parties.add(new Party(sides[i].name().toLowerCase() + "-" + i, sides[i], serverConnect));
        }
        ExecutorService pool = Executors.newFixedThreadPool(parties.size());
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (Party p : parties) {
                runs.add(pool.submit(() -> {
                    p.run();
                    return null;
                }));
            }
            Await.until(Duration.ofMinutes(60), () -> stop.get() || runs.stream().allMatch(Future::isDone),
                    "the fleet made its entries");
            for (int i = 0; i < runs.size(); i++) {
                Party p = parties.get(i);
                Future<?> f = runs.get(i);
                if (p.library == Library.ZKCOORD) {
                    try {
                        f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (TimeoutException stuck) {
                        ledger.ours(p.name + " still waiting in lock() " + WAIT.toSeconds() + " s after the last entry");
                    }
                } else if (!finishesOrHangs(f)) {
                    ledger.curators(p.name + " hung in acquire() with no node in the queue: a Curator waiter whose"
                            + " session ended does not always queue again");
                }
            }
            for (Future<?> f : runs) {
                if (f.isDone()) {
                    f.get(); // a party that failed fails the run
                }
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            for (Party p : parties) {
                p.proxy.close();
            }
        }
        for (Hold h : ledger.staleOurs()) {
            if (!Await.within(WAIT, () -> told.contains(h.token()))) {
                ledger.ours("stale zkcoord holder " + h + " never told of its loss");
            }
        }
        return new Outcome(seed, ledger.entries(), cuts, expiries, skipped, ledger.overlaps(), ledger.staleCurator(),
                ledger.staleOurs().size(), staleRefused.get(), ledger.ours(), ledger.curators(), lockFailures.get());
    }

    /**
     * Waits for a Curator party to finish; false if it hangs: still waiting while the queue has
     * been empty for 2 s (a live waiter always has a node there).
     */
    private boolean finishesOrHangs(Future<?> f) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        int emptyLooks = 0;
        while (!f.isDone() && System.nanoTime() < deadline) {
            emptyLooks = ledger.queueLength() == 0 ? emptyLooks + 1 : 0;
            if (emptyLooks >= 20) {
                return false;
            }
            Thread.sleep(100);
        }
        return f.isDone();
    }

    /** Injects the fault scheduled for {@code h}'s entry, if any (under the schedule's monitor: one at a time). */
    private void inject(Party holder, Hold h) throws Exception {
        int target;
        boolean expire;
        synchronized (this) {
            if (h.entry() != nextFault) {
                return;
            }
            nextFault += gap();
            expire = random.nextBoolean();
            target = random.nextBoolean() ? parties.indexOf(holder) : random.nextInt(parties.size());
        }
        Party p = parties.get(target);
        if (!expire) {
            p.proxy.cutAll();
            synchronized (this) {
                cuts++;
            }
            LOG.info("entry {}: cut the connection of {}", h.entry(), p.name);
            return;
        }
        ZooKeeper handle = p.handle();
        if (handle.getSessionId() == 0 || !handle.getState().isConnected()) {
            synchronized (this) {
                skipped++;
            }
            return;
        }
        try {
            SessionExpiry.expireOnServer(handle, serverConnect, WAIT);
        } catch (AssertionError notExpired) {
            synchronized (this) {
                skipped++;
            }
            return;
        }
        synchronized (this) {
            expiries++;
        }
        LOG.info("entry {}: ended the session of {} on the server", h.entry(), p.name);
        if (p == holder) {
            ledger.linger(h, () -> p.library == Library.ZKCOORD && !p.zkMutex.isHeldByCurrentThread(), LINGER_MS);
        }
    }
}
