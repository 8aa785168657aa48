package io.zkcoord.faults;

import io.zkcoord.ZkLease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the leases inside the critical section and checks, at the end, that at no moment more than
 * {@code permits} were inside among those whose loss was never reported. A lease is inside from {@link
 * #enter} (right after its acquisition) until {@link #leave} (right before its release) or until its
 * {@link ZkLease#whenLost()} fires, whichever comes first. Each moment the count went above the permits
 * (a crowd) is recorded with the leases inside; the crowd is a violation unless enough of them were
 * reported lost, before or after (see {@link InvariantChecker}'s exclusion rule). It also checks that no
 * two leases share a fencing token, and measures the time from each {@linkplain #fault fault} to the next
 * entry, and the longest time between two entries. Thread-safe: every method synchronizes on the ledger.
 */
public final class PermitLedger {

    private static final Logger log = LoggerFactory.getLogger(PermitLedger.class);

    /** One stay of one lease inside; identity-compared. */
    public static final class Holding {
        final String who;
        final long token;
        /** Null for a hold of another process, known by its token only. */
        final ZkLease lease;
        final long enteredAt;

        Holding(String who, long token, ZkLease lease, long enteredAt) {
            this.who = who;
            this.token = token;
            this.lease = lease;
            this.enteredAt = enteredAt;
        }

        /** @return the lease's fencing token */
        public long token() {
            return token;
        }

        @Override
        public String toString() {
            return who + "(token " + token + ")";
        }
    }

    private final String scenario;
    private final int permits;
    private final long start = System.nanoTime();
    private final Set<Holding> inside = new LinkedHashSet<>();
    private final List<List<Holding>> crowds = new ArrayList<>();
    /** Token of each reported loss, with when it was reported. */
    private final Map<Long, Long> lossesReported = new LinkedHashMap<>();
    private final Set<Long> tokens = new HashSet<>();
    private final List<String> duplicateTokens = new ArrayList<>();
    private final List<String> tolerated = new ArrayList<>();
    private final List<String> faults = new ArrayList<>();
    private final List<Long> faultToNextEntryMillis = new ArrayList<>();
    private long faultAt = -1;
    private long lastEntryAt = -1;
    private long longestGapNanos;
    private int entries;
    private int maxInside;
    private long highestToken = -1;

    /**
     * @param scenario a name for messages and the report
     * @param permits the semaphore's permits: more leases inside at once is a crowd
     */
    public PermitLedger(String scenario, int permits) {
        this.scenario = scenario;
        this.permits = permits;
    }

    /** A lease of this process enters; its loss, when reported, ends its stay. @return its stay */
    public Holding enter(String who, ZkLease lease) {
        Holding h = add(who, lease.fencingToken(), lease);
        lease.whenLost().thenRun(() -> lost(h)); // at once if already lost
        return h;
    }

    /** A hold of another process, known by its token, enters. @return its stay */
    public Holding enterForeign(String who, long token) {
        return add(who, token, null);
    }

    private synchronized Holding add(String who, long token, ZkLease lease) {
        long now = System.nanoTime();
        Holding h = new Holding(who, token, lease, now);
        if (!tokens.add(token)) {
            duplicateTokens.add(h.toString());
        }
        highestToken = Math.max(highestToken, token);
        inside.add(h);
        entries++;
        maxInside = Math.max(maxInside, inside.size());
        if (inside.size() > permits) {
            crowds.add(List.copyOf(inside));
            log.warn("{}: {} entered while {} are inside", scenario, h, inside);
        }
        if (lastEntryAt >= 0) {
            longestGapNanos = Math.max(longestGapNanos, now - lastEntryAt);
        }
        lastEntryAt = now;
        if (faultAt >= 0) {
            faultToNextEntryMillis.add(TimeUnit.NANOSECONDS.toMillis(now - faultAt));
            faultAt = -1;
        }
        return h;
    }

    /** The stay ends: call it before releasing. Nothing happens if its loss already ended it. */
    public synchronized void leave(Holding h) {
        inside.remove(h);
    }

    private synchronized void lost(Holding h) {
        lossesReported.putIfAbsent(h.token, System.nanoTime());
        inside.remove(h);
        log.info("{}: loss of {} reported", scenario, h);
    }

    /** Records a failure of a client that the scenario tolerates (its session was lost). */
    public synchronized void tolerated(String who, Exception e) {
        tolerated.add(who + ": " + e);
        log.info("{}: tolerated failure of {} after a session loss: {}", scenario, who, e.toString());
    }

    /** Marks the moment a fault struck; the time to the next entry is measured. */
    public synchronized void fault(String what) {
        long now = System.nanoTime();
        faults.add(what + " at +" + TimeUnit.NANOSECONDS.toMillis(now - start) + " ms, entry " + entries);
        faultAt = now;
        log.info("{}: fault: {}", scenario, what);
    }

    public synchronized int entries() {
        return entries;
    }

    public synchronized int maxInside() {
        return maxInside;
    }

    public synchronized long highestToken() {
        return highestToken;
    }

    public synchronized int lossesReported() {
        return lossesReported.size();
    }

    /** @return every broken invariant; empty when all hold */
    public synchronized List<String> violations() {
        List<String> found = new ArrayList<>();
        for (List<Holding> crowd : crowds) {
            List<Holding> unreported = crowd.stream().filter(h -> !lossesReported.containsKey(h.token)).toList();
            if (unreported.size() > permits) {
                found.add(unreported.size() + " leases inside at once with " + permits + " permits, none of"
                        + " them reported lost: " + unreported);
            }
        }
        for (String d : duplicateTokens) {
            found.add("fencing token seen twice: " + d);
        }
        return found;
    }

    /** @throws AssertionError listing every violation, if any */
    public void assertNoViolations() {
        ScenarioVerdict.assertNone(scenario, violations(), summary());
    }

    /** Waits for every client thread and rethrows the first failure; no thread may be left waiting. */
    public void assertAllDone(List<? extends Future<?>> work, Duration within) throws InterruptedException {
        ScenarioVerdict.assertAllDone(scenario, work, within, this::summary);
    }

    /** @return one line for the report */
    public synchronized String summary() {
        return scenario + ": entries=" + entries + " maxInside=" + maxInside + " crowds=" + crowds.size()
                + " losses=" + lossesReported.size() + " tolerated=" + tolerated.size()
                + " faultToNextEntry=" + faultToNextEntryMillis + "ms longestGapBetweenEntries="
                + TimeUnit.NANOSECONDS.toMillis(longestGapNanos) + "ms faults=" + faults;
    }
}
