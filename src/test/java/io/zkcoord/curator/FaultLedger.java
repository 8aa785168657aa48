package io.zkcoord.curator;

import io.zkcoord.curator.Contender.Library;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The critical section of a mixed fleet under faults, and the ledger that judges every overlap in
 * it, keeping Curator's known faults apart from ours (the rule of {@link MixedFleetFaultsTest}):
 * <ul>
 *   <li>When a party enters while others are inside (an <b>overlap</b>), each hold inside is
 *       looked up on the server, by a client of its own: a hold whose node is gone is
 *       <b>stale</b>: its session was ended by the server (an ephemeral node goes only with its
 *       session, or by its owner's release, which comes after it left). At most one hold inside
 *       may be live; two live holds are a broken exclusion, counted against us whenever a zkcoord
 *       hold is one of them.
 *   <li>A stale <b>Curator</b> hold is Curator's known fault: its mutex has no way to tell its
 *       holder. Recorded as Curator's, not counted.
 *   <li>A stale <b>zkcoord</b> hold must be told: its loss listener must fire for its token
 *       (checked at the end of the run, with a deadline), and a guarded commit it makes after it
 *       was judged stale must be refused by the server. Otherwise the fault is ours.
 * </ul>
 * Thread-safe: every method runs under this object's monitor.
 */
final class FaultLedger {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FaultLedger.class);

    /**
     * One stay in the section: the party, its library, and what identifies its node on the
     * server: the node's path (Curator) or its czxid, which is our fencing token (zkcoord).
     */
    record Hold(String party, Library library, String nodePath, long token, long entry) {
        @Override
        public String toString() {
            return party + "#" + entry + (library == Library.CURATOR ? "(" + nodePath + ")" : "(token " + token + ")");
        }
    }

    private final ZooKeeper observer;
    private final String dir;
    private final Set<Hold> inside = new LinkedHashSet<>();
    private final Set<Hold> staleCurator = new LinkedHashSet<>();
    private final Set<Hold> staleOurs = new LinkedHashSet<>();
    private final List<String> ours = new ArrayList<>();
    private final List<String> curators = new ArrayList<>();
    private long entries;
    private long overlaps;

    FaultLedger(ZooKeeper observer, String dir) {
        this.observer = observer;
        this.dir = dir;
    }

    /** @return the number the next entry will get (entries are numbered from 1) */
    synchronized long nextEntry() {
        return entries + 1;
    }

    /**
     * A party enters the section; judges the overlap if anyone else is inside.
     *
     * @param make the hold, given the entry's number
     * @return the hold, numbered
     */
    synchronized Hold enter(java.util.function.LongFunction<Hold> make) throws Exception {
        Hold h = make.apply(++entries);
        inside.add(h);
        if (inside.size() > 1) {
            overlaps++;
            judge();
        }
        notifyAll();
        return h;
    }

    synchronized void leave(Hold h) {
        inside.remove(h);
    }

    /**
     * Waits until another party has entered after {@code h}, or {@code done} holds, or {@code
     * millis} pass: a holder whose own session was just ended lingers so that the party granted
     * next can meet it inside.
     */
    synchronized void linger(Hold h, java.util.function.BooleanSupplier done, long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        while (entries == h.entry() && !done.getAsBoolean()) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return;
            }
            wait(Math.min(left, 20));
        }
    }

    /** @return whether {@code h} was judged stale in an overlap so far */
    synchronized boolean judgedStale(Hold h) {
        return staleOurs.contains(h) || staleCurator.contains(h);
    }

    /** Records a fault of ours found by a party itself (a guarded commit of a stale hold applied). */
    synchronized void ours(String fault) {
        ours.add(fault);
    }

    private void judge() throws Exception {
        List<Hold> live = new ArrayList<>();
        for (Hold h : inside) {
            if (alive(h)) {
                live.add(h);
            } else if (h.library() == Library.CURATOR) {
                if (staleCurator.add(h)) {
                    LOG.info("entry {} met stale Curator holder {} inside", entries, h);
                    curators.add("stale Curator holder " + h + " inside beside " + inside
                            + ": its session ended and Curator did not tell it");
                }
            } else if (staleOurs.add(h)) {
                LOG.info("entry {} met stale zkcoord holder {} inside", entries, h);
            }
        }
        if (live.size() > 1) {
            String fault = "two live holders inside at once: " + live;
            if (live.stream().anyMatch(h -> h.library() == Library.ZKCOORD)) {
                ours.add(fault);
            } else {
                curators.add(fault);
            }
        }
    }

    private boolean alive(Hold h) throws Exception {
        if (h.library() == Library.CURATOR) {
            return h.nodePath() != null && observer.exists(h.nodePath(), false) != null;
        }
        List<String> children;
        try {
            children = observer.getChildren(dir, false);
        } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
            return false;
        }
        for (String child : children) {
            Stat s = observer.exists(dir + "/" + child, false);
            if (s != null && s.getCzxid() == h.token()) {
                return true;
            }
        }
        return false;
    }

    /** @return how many nodes the lock directory holds now (0 if it is gone) */
    int queueLength() throws Exception {
        try {
            return observer.getChildren(dir, false).size();
        } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
            return 0;
        }
    }

    synchronized long entries() {
        return entries;
    }

    synchronized long overlaps() {
        return overlaps;
    }

    synchronized List<Hold> staleOurs() {
        return new ArrayList<>(staleOurs);
    }

    synchronized int staleCurator() {
        return staleCurator.size();
    }

    synchronized List<String> ours() {
        return new ArrayList<>(ours);
    }

    synchronized List<String> curators() {
        return new ArrayList<>(curators);
    }

    /** Records a Curator fault seen outside the section (such as a waiter that never came back). */
    synchronized void curators(String fault) {
        curators.add(fault);
    }
}
