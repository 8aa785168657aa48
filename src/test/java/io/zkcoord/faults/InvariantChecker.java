package io.zkcoord.faults;

import io.zkcoord.lock.LockLossListener;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.testing.Await;
import io.zkcoord.test.FencedResource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one fault scenario from the side of the guarded resource and checks, at the end, what a lock
 * must guarantee on its worst day:
 *
 * <ol>
 *   <li><b>Exclusion.</b> No two holders are inside the critical section at once (a writer or mutex holder
 *       beside anyone; readers may share) unless one of the two holds was lost, and that loss was reported
 *       by a {@link LockLossListener}, before or after the overlap: a holder cut off from ZooKeeper learns
 *       of its loss only some time after the ensemble handed the lock on.
 *   <li><b>Fencing.</b> The {@link FencedResource} refuses a write only from a holder whose loss was
 *       reported. A refusal of a holder that was never told is a lock that lied.
 *   <li><b>No lost update.</b> Every accepted write increments a plain counter by a read, a yield and a
 *       write, the way unprotected application code would; two writers inside at once lose an increment,
 *       so the counter must equal the accepted writes.
 *   <li><b>Nothing left behind</b>: {@link #assertDirectoryEmpty} once every client released or closed,
 *       and {@link #assertAllDone} for the client threads.
 * </ol>
 * Holds are named by their fencing token (the {@code czxid} of the holder's node): unique per hold, and
 * what a {@link LockLossListener} reports.
 *
 * <p>It also measures: acquisitions, overlaps, the longest hand-off (from one exclusive holder leaving to
 * the next one entering, or from a {@linkplain #fault fault} to the next entry), for the report.
 *
 * <p>Thread-safe: every method synchronizes on this checker, except the critical section's own counter
 * increment, which is unprotected on purpose.
 */
public final class InvariantChecker {

    private static final Logger log = LoggerFactory.getLogger(InvariantChecker.class);

    /** How a holder is inside. */
    public enum Mode {
        /** A read hold: shares with other reads. */
        SHARED,
        /** A mutex or write hold: shares with nobody. */
        EXCLUSIVE
    }

    /** One stay of one holder in the critical section. */
    public static final class Entry {
        final String holder;
        final long token;
        final Mode mode;
        final long enteredAt;
        long leftAt;

        Entry(String holder, long token, Mode mode, long enteredAt) {
            this.holder = holder;
            this.token = token;
            this.mode = mode;
            this.enteredAt = enteredAt;
        }

        /** @return the fencing token of the hold */
        public long token() {
            return token;
        }

        @Override
        public String toString() {
            return holder + "(" + mode + ", token " + token + ")";
        }
    }

    private record Overlap(Entry inside, Entry entering) {
    }

    private final String scenario;
    private final FencedResource resource = new FencedResource();
    private final long start = System.nanoTime();

    private final Set<Entry> inside = new HashSet<>();
    private final List<Overlap> overlaps = new ArrayList<>();
    /** Token of each reported loss, with when it was reported. */
    private final Map<Long, Long> lossesReported = new LinkedHashMap<>();
    private final List<Entry> refusedWrites = new ArrayList<>();
    private final List<String> faults = new ArrayList<>();
    /** Every token that has entered. */
    private final Set<Long> tokensSeen = new HashSet<>();
    private int acquisitions;
    private int maxSharedInside;
    /** When the last exclusive holder left, or a fault struck, with nobody inside since: a hand-off is due. */
    private long handOffFrom = -1;
    private String handOffCause;
    private long longestHandOffNanos;
    private String longestHandOffCause = "none";
    private long faultAt = -1;
    private long faultToNextEntryNanos = -1;

    /** Incremented by the critical section itself, unprotected: see the class comment. */
    private volatile long counter;

    /** @param scenario a name for messages and the report */
    public InvariantChecker(String scenario) {
        this.scenario = scenario;
    }

    /** @return a listener that records each reported loss; add it to every lock of the scenario */
    public LockLossListener lossListener() {
        return (lock, token) -> lost(token);
    }

    /** Adds {@link #lossListener()} to {@code lock}; @return {@code lock} */
    public <L extends ZkLock> L tracked(L lock) {
        lock.addLossListener(lossListener());
        return lock;
    }

    /** Records that the loss of the hold with {@code token} was reported. */
    public synchronized void lost(long token) {
        lossesReported.putIfAbsent(token, System.nanoTime());
        log.info("{}: loss of hold {} reported", scenario, token);
    }

    /** @return true if the loss of the hold with {@code token} has been reported */
    public synchronized boolean lossReported(long token) {
        return lossesReported.containsKey(token);
    }

    /** @return how many losses were reported */
    public synchronized int lossesReported() {
        return lossesReported.size();
    }

    /**
     * A holder enters the critical section. Call it right after acquiring, on the holder's thread.
     *
     * @param holder a name for messages
     * @param token the hold's fencing token
     * @param mode how it holds
     */
    public synchronized Entry enter(String holder, long token, Mode mode) {
        long now = System.nanoTime();
        Entry entry = new Entry(holder, token, mode, now);
        for (Entry other : inside) {
            if (mode == Mode.EXCLUSIVE || other.mode == Mode.EXCLUSIVE) {
                overlaps.add(new Overlap(other, entry));
                log.warn("{}: {} entered while {} is inside", scenario, entry, other);
            }
        }
        inside.add(entry);
        tokensSeen.add(token);
        acquisitions++;
        if (mode == Mode.SHARED) {
            maxSharedInside = Math.max(maxSharedInside, (int) inside.stream().filter(e -> e.mode == Mode.SHARED).count());
        }
        if (handOffFrom >= 0) {
            long gap = now - handOffFrom;
            if (gap > longestHandOffNanos) {
                longestHandOffNanos = gap;
                longestHandOffCause = handOffCause;
            }
            handOffFrom = -1;
        }
        if (faultAt >= 0 && faultToNextEntryNanos < 0) {
            faultToNextEntryNanos = now - faultAt;
        }
        return entry;
    }

    /**
     * One lock cycle on the calling thread: lock (blocking), enter, run {@code whenEntered}, write if
     * exclusive, stay {@code holdNanos}, leave, unlock. Throws what {@code lock()} or {@code unlock()} throws.
     */
    public void cycle(String holder, ZkLock lock, boolean exclusive, long holdNanos, Runnable whenEntered) {
        lock.lock();
        try {
            Entry e = enter(holder, lock.fencingToken(), exclusive ? Mode.EXCLUSIVE : Mode.SHARED);
            whenEntered.run();
            if (exclusive) {
                write(e);
            }
            LockSupport.parkNanos(holdNanos);
            leave(e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes to the fenced resource with the entry's token; if accepted, increments the counter the way
     * an unprotected critical section would (read, yield, write).
     *
     * @return true if the resource accepted the write
     */
    public boolean write(Entry entry) {
        boolean accepted;
        synchronized (this) {
            accepted = accept(entry);
            if (!accepted) {
                refusedWrites.add(entry);
                log.info("{}: write of {} refused by the fenced resource", scenario, entry);
            }
        }
        if (accepted) {
            long seen = counter;
            Thread.yield();
            counter = seen + 1;
        }
        return accepted;
    }

    /** A holder leaves the critical section; call it before unlocking. */
    public synchronized void leave(Entry entry) {
        entry.leftAt = System.nanoTime();
        inside.remove(entry);
        if (entry.mode == Mode.EXCLUSIVE && inside.isEmpty()) {
            handOffFrom = entry.leftAt;
            handOffCause = "release by " + entry.holder;
        }
    }

    /**
     * Marks the moment a fault struck. The time from it to the next entry is measured, and counts as a
     * hand-off too.
     */
    public synchronized void fault(String what) {
        long now = System.nanoTime();
        faults.add(what + " at +" + TimeUnit.NANOSECONDS.toMillis(now - start) + " ms");
        faultAt = now;
        faultToNextEntryNanos = -1;
        handOffFrom = now;
        handOffCause = what;
        log.info("{}: fault: {}", scenario, what);
    }

    /** @return how many entries so far */
    public synchronized int acquisitions() {
        return acquisitions;
    }

    /** @return whether a holder with {@code token} has entered (it may have left since) */
    public synchronized boolean entered(long token) {
        return tokensSeen.contains(token);
    }

    /** @return how many holders are inside now */
    public synchronized int insideNow() {
        return inside.size();
    }

    /** @return the most readers seen inside together (shows the read/write test shares at all) */
    public synchronized int maxSharedInside() {
        return maxSharedInside;
    }

    /** @return the value of the critical section's counter */
    public long counter() {
        return counter;
    }

    /** @return the fenced resource's accepted writes */
    public synchronized long acceptedWrites() {
        return resource.accepted().size();
    }

    /** @return the fenced resource's refused writes */
    public synchronized long refusedWrites() {
        return resource.rejected();
    }

    /** @return the time from the last {@link #fault} to the next entry, or -1 if none came yet */
    public synchronized long faultToNextEntryMillis() {
        return faultToNextEntryNanos < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(faultToNextEntryNanos);
    }

    /**
     * @return the longest time, in ms, that a holder went on believing it held the lock after the next
     *     holder had entered: from that entry until the old holder's loss was reported (0 if never)
     */
    public synchronized long longestUnawareMillis() {
        long longest = 0;
        for (Overlap o : overlaps) {
            Long told = lossesReported.get(o.inside.token);
            if (told != null) {
                longest = Math.max(longest, told - o.entering.enteredAt);
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(longest);
    }

    /** @return the longest hand-off measured, in ms (see the class comment) */
    public synchronized long longestHandOffMillis() {
        return TimeUnit.NANOSECONDS.toMillis(longestHandOffNanos);
    }

    /** @return every broken invariant among those checked without ZooKeeper; empty when all hold */
    public synchronized List<String> violations() {
        List<String> found = new ArrayList<>();
        for (Overlap o : overlaps) {
            if (!lossesReported.containsKey(o.inside.token) && !lossesReported.containsKey(o.entering.token)) {
                found.add("overlap without a reported loss: " + o.entering + " entered while " + o.inside
                        + " was inside");
            }
        }
        for (Entry e : refusedWrites) {
            if (!lossesReported.containsKey(e.token)) {
                found.add("write of " + e + " refused, but its holder was never told of a loss");
            }
        }
        if (counter != resource.accepted().size()) {
            found.add("counter " + counter + " != accepted writes " + resource.accepted().size()
                    + ": two writers incremented it at once");
        }
        return found;
    }

    /** @throws AssertionError listing every violation, if any */
    public void assertNoViolations() {
        ScenarioVerdict.assertNone(scenario, violations(), summary());
    }

    /**
     * Waits until the lock directory holds no node: once every client released or closed, nothing may be
     * left, not even an orphan of a lost create.
     *
     * @param zk a live handle to read with
     * @param dir the lock directory (a missing directory counts as empty)
     * @param within how long clean-up may take (a release cut off by a fault finishes in the background)
     */
    public void assertDirectoryEmpty(ZooKeeper zk, String dir, Duration within) {
        Await.until(within, () -> children(zk, dir).isEmpty(),
                () -> scenario + ": lock directory " + dir + " still holds " + children(zk, dir));
    }

    /** @return the children of {@code dir}, empty if it does not exist */
    public static List<String> children(ZooKeeper zk, String dir) {
        try {
            return zk.getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new AssertionError("cannot read " + dir + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted reading " + dir, e);
        }
    }

    /**
     * Waits for every client thread's work to end and rethrows the first failure: no thread may be left
     * waiting for a lock.
     *
     * @throws AssertionError naming how many are still running after {@code within}
     */
    public void assertAllDone(List<? extends Future<?>> work, Duration within) throws InterruptedException {
        ScenarioVerdict.assertAllDone(scenario, work, within, this::summary);
    }

    /** @return one line for the report */
    public synchronized String summary() {
        return scenario + ": acquisitions=" + acquisitions + " accepted=" + resource.accepted().size() + " refused="
                + resource.rejected() + " counter=" + counter + " overlaps=" + overlaps.size() + " losses="
                + lossesReported.size() + " maxReaders=" + maxSharedInside + " longestHandOff="
                + TimeUnit.NANOSECONDS.toMillis(longestHandOffNanos) + "ms (" + longestHandOffCause + ")"
                + " faultToNextEntry=" + (faultToNextEntryNanos < 0 ? "-" : faultToNextEntryMillis() + "ms")
                + " longestUnaware=" + longestUnawareMillis() + "ms"
                + " faults=" + faults;
    }

    @Override
    public String toString() {
        return "InvariantChecker[" + summary() + "]";
    }

    /** @return whether the fenced resource accepted the write of {@code entry} (it refuses a stale token) */
    private boolean accept(Entry entry) {
        try {
            resource.write(entry.token, entry.toString());
            return true;
        } catch (IllegalStateException stale) {
            return false;
        }
    }
}
