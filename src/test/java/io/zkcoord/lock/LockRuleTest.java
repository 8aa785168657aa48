package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.Turn;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link LockRule}: "held, or which single node to watch", as a pure function of the queue. No
 * server. Queues are written as kinds in order, e.g. {@code "W R W R"}; node {@code i} has
 * sequence {@code 10 * i + 3} and a random-looking attempt id.
 */
class LockRuleTest {

    // ------------------------------------------------------------------ exclusive rule

    /** An exclusive node first in the queue holds, whatever stands behind it. */
    @Test
    void exclusiveFirstHolds() {
        List<QueueNode> q = queue("W R R W");
        assertHeld(q, 0);
        List<QueueNode> m = queue("L L");
        assertHeld(m, 0);
    }

    /** An exclusive node not first watches its immediate predecessor, whether read or write. */
    @Test
    void exclusiveWatchesImmediatePredecessor() {
        List<QueueNode> q = queue("W R R W W");
        assertWatch(q, 3, 2, false); // a read before it: watch that read, not the earlier write
        assertWatch(q, 4, 3, false);
        List<QueueNode> m = queue("L L L");
        assertWatch(m, 1, 0, true);
        assertWatch(m, 2, 1, false);
    }

    /** Second in the queue, an exclusive node is held once its predecessor goes; further back it must look again. */
    @Test
    void exclusiveHeldWhenGoneOnlyInSecondPlace() {
        assertWatch(queue("R W"), 1, 0, true);
        assertWatch(queue("W W"), 1, 0, true);
        assertWatch(queue("R R W"), 2, 1, false); // the first read may still be there
        assertWatch(queue("W W W"), 2, 1, false);
    }

    /**
     * Curator's nodes count as the kinds of ours they match; right behind a Curator write node an
     * exclusive waiter looks again when it goes (a Curator downgrade may leave a read in its place),
     * behind a Curator mutex node or one of our writes it holds at once.
     */
    @Test
    void curatorNodesCountAsTheirKinds() {
        List<QueueNode> q = curatorQueue("__WRIT__", "__WRIT__");
        assertWatch(q, 1, 0, false);
        assertWatch(curatorQueue("lock-", "lock-"), 1, 0, true);
        assertWatch(curatorQueue("__READ__", "__WRIT__"), 1, 0, true);
        List<QueueNode> readers = curatorQueue("__READ__", "__READ__", "__WRIT__", "__READ__");
        assertHeld(readers, 0);
        assertHeld(readers, 1);
        assertWatch(readers, 3, 2, true); // a reader may hold beside a Curator downgrade's read
        List<QueueNode> mixed = new ArrayList<>(curatorQueue("__WRIT__"));
        mixed.add(node(NodeKind.WRITE, "5f0c0d2a9e110123456789ab8b3c6a1e", 99));
        assertWatch(mixed, 1, 0, false);
    }

    // ------------------------------------------------------------------ shared rule

    /** A read holds when no exclusive node stands ahead: alone, behind reads, or ahead of writers. */
    @Test
    void sharedHoldsWithoutExclusiveAhead() {
        List<QueueNode> q = queue("R R R W R");
        assertHeld(q, 0);
        assertHeld(q, 1);
        assertHeld(q, 2);
    }

    /** A read behind several writes watches the last write before it, not the first write in the queue. */
    @Test
    void sharedWatchesLastWriteBeforeItNotTheFirst() {
        List<QueueNode> q = queue("W W R W R R");
        assertWatch(q, 2, 1, false);
        assertWatch(q, 4, 3, false);
        assertWatch(q, 5, 3, false);
    }

    /** A read skips the reads between it and the last write: it never watches another read. */
    @Test
    void sharedSkipsReadsBetweenItAndTheWrite() {
        List<QueueNode> q = queue("R W R R R");
        assertWatch(q, 2, 1, true);
        assertWatch(q, 4, 1, true); // not node 3, its immediate predecessor
    }

    /** The worked example: W0 W1 R2..R21. W1 watches W0; all twenty readers watch W1. */
    @Test
    void workedExample() {
        List<QueueNode> q = queue("W W" + " R".repeat(20));
        assertHeld(q, 0);
        assertWatch(q, 1, 0, true);
        for (int i = 2; i < 22; i++) {
            assertWatch(q, i, 1, false);
        }
        // After W0 leaves: the readers' blocker is the only exclusive one ahead.
        List<QueueNode> after = q.subList(1, q.size());
        assertHeld(after, 0);
        for (int i = 1; i < 21; i++) {
            assertWatch(after, i, 0, true);
        }
        // After W1 leaves too: all twenty hold together.
        List<QueueNode> last = q.subList(2, q.size());
        for (int i = 0; i < 20; i++) {
            assertHeld(last, i);
        }
    }

    // ------------------------------------------------------------------ heldWhenGone

    /** A read's heldWhenGone is true exactly when one exclusive node stands ahead, however many reads do. */
    @Test
    void sharedHeldWhenGoneCountsExclusiveNodesOnly() {
        assertWatch(queue("W R"), 1, 0, true);
        assertWatch(queue("R R W R"), 3, 2, true);
        assertWatch(queue("R W R R W R"), 5, 4, false);
        assertWatch(queue("W R W R"), 3, 2, false);
        assertWatch(queue("W R W R"), 1, 0, true);
    }

    // ------------------------------------------------------------------ missing, mixed kinds, ordering

    /** When one's own node is not in the queue (deleted, session ended) the answer is Missing, for every kind. */
    @Test
    void missingOwnNode() {
        List<QueueNode> q = queue("W R W");
        for (NodeKind kind : NodeKind.values()) {
            QueueNode stranger = node(kind, "0123456789abcdef0123456789abcdef", 999);
            assertInstanceOf(Turn.Missing.class, LockRule.decideFor(q, stranger));
            assertInstanceOf(Turn.Missing.class, LockRule.decideFor(List.of(), stranger));
        }
    }

    /** Another attempt's node with the same sequence (a recreated directory) is not one's own: found by name. */
    @Test
    void ownNodeIsFoundByNameNotSequence() {
        List<QueueNode> q = queue("W R");
        QueueNode same = q.get(0);
        QueueNode twin = node(NodeKind.of(same), "ffffffffffffffffffffffffffffffff", same.sequence());
        assertInstanceOf(Turn.Missing.class, LockRule.decideFor(q, twin));
    }

    /** Mutex ({@code lock-}) nodes count as exclusive for readers and writers alike, in one mixed queue. */
    @Test
    void mixedKinds() {
        List<QueueNode> q = queue("R L R W L R");
        assertHeld(q, 0);
        assertWatch(q, 1, 0, true);   // lock behind a read
        assertWatch(q, 2, 1, true);   // read behind a lock
        assertWatch(q, 3, 2, false);  // write behind a read
        assertWatch(q, 4, 3, false);  // lock behind a write
        assertWatch(q, 5, 4, false);  // read: last exclusive is the lock
    }

    /**
     * The rule uses the queue order of {@link QueueNode#queue}: by sequence only. Names whose kinds
     * and attempt ids sort opposite to their sequences still give the sequence answer.
     */
    @Test
    void orderingBySequenceOnly() {
        String write = "write-ffffffffffffffffffffffffffffffff-0000000001";
        String readHigh = "read-00000000000000000000000000000000-0000000002";
        String readLow = "read-ffffffffffffffffffffffffffffffff-0000000003";
        String writeLast = "write-00000000000000000000000000000000-0000000004";
        List<String> byName = new ArrayList<>(List.of(writeLast, readLow, write, readHigh));
        byName.sort(null); // what a naive implementation would do
        assertEquals(List.of(readHigh, readLow, writeLast, write), byName);

        List<QueueNode> q = QueueNode.queue(byName);
        QueueNode w1 = QueueNode.parse(write).orElseThrow();
        QueueNode r2 = QueueNode.parse(readHigh).orElseThrow();
        QueueNode r3 = QueueNode.parse(readLow).orElseThrow();
        QueueNode w4 = QueueNode.parse(writeLast).orElseThrow();
        assertEquals(new Turn.Held(), LockRule.decideFor(q, w1));
        assertEquals(new Turn.Watch(w1, true), LockRule.decideFor(q, r2));
        assertEquals(new Turn.Watch(w1, true), LockRule.decideFor(q, r3));
        assertEquals(new Turn.Watch(r3, false), LockRule.decideFor(q, w4));
    }

    // ------------------------------------------------------------------ helpers

    /** A queue from kinds ({@code W}, {@code R}, {@code L}), with attempt ids that descend as sequences ascend. */
    private static List<QueueNode> queue(String kinds) {
        String[] letters = kinds.trim().split("\\s+");
        List<QueueNode> nodes = new ArrayList<>();
        for (int i = 0; i < letters.length; i++) {
            NodeKind kind = switch (letters[i]) {
                case "W" -> NodeKind.WRITE;
                case "R" -> NodeKind.READ;
                case "L" -> NodeKind.LOCK;
                default -> throw new IllegalArgumentException(letters[i]);
            };
            String id = String.format("%032x", Long.MAX_VALUE - i);
            nodes.add(node(kind, id, 10L * i + 3));
        }
        assertEquals(nodes, QueueNode.queue(nodes.stream().map(QueueNode::name).toList()), "already in queue order");
        return List.copyOf(nodes);
    }

    /** Curator-form nodes with the given lock names, sequences 10 * i + 3. */
    private static List<QueueNode> curatorQueue(String... lockNames) {
        List<QueueNode> nodes = new ArrayList<>();
        for (int i = 0; i < lockNames.length; i++) {
            nodes.add(QueueNode.parse(String.format("_c_8b3c6a1e-5f0c-4d2a-9e11-0123456789ab-%s%010d", lockNames[i],
                    10L * i + 3)).orElseThrow());
        }
        return nodes;
    }

    private static QueueNode node(NodeKind kind, String attemptId, long sequence) {
        return QueueNode.parse(String.format("%s-%s-%010d", kind.prefix(), attemptId, sequence)).orElseThrow();
    }

    private static void assertHeld(List<QueueNode> q, int own) {
        assertEquals(new Turn.Held(), LockRule.decideFor(q, q.get(own)), () -> "node " + own + " of " + names(q));
    }

    private static void assertWatch(List<QueueNode> q, int own, int watched, boolean heldWhenGone) {
        assertEquals(new Turn.Watch(q.get(watched), heldWhenGone), LockRule.decideFor(q, q.get(own)),
                () -> "node " + own + " of " + names(q));
    }

    private static String names(List<QueueNode> q) {
        return q.stream().map(n -> n.kind() + n.sequence()).toList().toString();
    }
}
