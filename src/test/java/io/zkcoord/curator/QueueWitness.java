package io.zkcoord.curator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Watches an exclusive critical section shared by a mixed fleet, from outside both libraries:
 * <ul>
 *   <li><b>no overlap</b>: a count of holders inside, which must be one at every entry; and a
 *       plain counter incremented with a read, a yield and a write (two inside at once lose an
 *       increment, so it must equal the entries);
 *   <li><b>FIFO</b>: at every entry the holder's node is the head of the directory (the child with
 *       the lowest ten-digit sequence, read here by its own separate client, and owned by the
 *       holder's session), and the heads' sequences strictly increase from one entry to the next:
 *       a node created later never holds before one created earlier. (Compared within one
 *       incarnation of the directory: one removed with its last node and made again restarts its
 *       sequence, after an empty queue.)
 * </ul>
 * Thread-safe: the history is appended under this object's monitor.
 */
final class QueueWitness {

    private final ZooKeeper observer;
    private final String dir;
    private final AtomicInteger inside = new AtomicInteger();
    private final List<String> problems = new ArrayList<>();
    private final List<Long> heads = new ArrayList<>();
    private final List<String> holders = new ArrayList<>();
    private long counter;
    private long incarnation;
    private int incarnations;
    private long entries;

    QueueWitness(ZooKeeper observer, String dir) {
        this.observer = observer;
        this.dir = dir;
    }

    /**
     * One stay in the critical section by {@code party}, whose session is {@code sessionId}.
     *
     * @return the czxid of the head node (the holder's, if all is well): a fencing token as
     *     zkcoord's, for a holder that has none of its own (Curator's)
     */
    long enter(String party, long sessionId) throws Exception {
        int now = inside.incrementAndGet();
        if (now != 1) {
            problem(party + " entered with " + (now - 1) + " other holder(s) inside");
        }
        String head = null;
        long headSeq = Long.MAX_VALUE;
        Stat dirStat = new Stat();
        for (String child : observer.getChildren(dir, false, dirStat)) {
            long seq = Long.parseLong(child.substring(child.length() - 10));
            if (seq < headSeq) {
                headSeq = seq;
                head = child;
            }
        }
        Stat stat = head == null ? null : observer.exists(dir + "/" + head, false);
        if (stat == null || stat.getEphemeralOwner() != sessionId) {
            problem(party + " holds but the head of " + dir + " is " + head + " of session 0x"
                    + (stat == null ? "none" : Long.toHexString(stat.getEphemeralOwner())));
        }
        long c = counter;
        Thread.yield();
        counter = c + 1;
        synchronized (this) {
            entries++;
            // A directory removed with its last node (by zkcoord's release) and made again restarts
            // its sequence: the queue was empty in between, so order is compared within one incarnation.
            if (dirStat.getCzxid() != incarnation) {
                incarnation = dirStat.getCzxid();
                heads.clear();
                incarnations++;
            }
            if (!heads.isEmpty() && headSeq <= heads.get(heads.size() - 1)) {
                problem(party + " holds with sequence " + headSeq + " after " + holders.get(holders.size() - 1)
                        + " held with " + heads.get(heads.size() - 1) + ": not FIFO");
            }
            heads.add(headSeq);
            holders.add(party);
        }
        inside.decrementAndGet();
        return stat == null ? -1 : stat.getCzxid();
    }

    private synchronized void problem(String p) {
        if (problems.size() < 20) {
            problems.add(p);
        }
    }

    synchronized List<String> problems() {
        List<String> all = new ArrayList<>(problems);
        if (counter != entries) {
            all.add("lost updates: counter " + counter + " after " + entries + " entries");
        }
        return all;
    }

    /** @return how many incarnations of the directory the entries saw */
    synchronized int incarnations() {
        return incarnations;
    }

    synchronized long entries() {
        return entries;
    }

    /** @return how many entries each side made, by the party name's prefix before '-' */
    synchronized java.util.Map<String, Long> entriesBySide() {
        java.util.Map<String, Long> by = new java.util.TreeMap<>();
        holders.forEach(h -> by.merge(h.substring(0, h.indexOf('-')), 1L, Long::sum));
        return by;
    }
}
