package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.queue.QueueNode;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link QueueNode}: parsing node names, queue order, and what is not a lock node. No server. */
class QueueNodeTest {

    private static final String LOW_ID = "00000000000000000000000000000000";
    private static final String HIGH_ID = "ffffffffffffffffffffffffffffffff";
    private static final String ID = "5f0c9a1b2c3d4e5f60718293a4b5c6d7";

    /** Each kind's name parses into its kind, attempt id and sequence, keeping the whole name. */
    @Test
    void parsesEveryKind() {
        for (NodeKind kind : NodeKind.values()) {
            String name = kind.prefix() + "-" + ID + "-0000000042";
            QueueNode node = QueueNode.parse(name).orElseThrow();
            assertEquals(name, node.name());
            assertEquals(kind, NodeKind.of(node));
            assertEquals(ID, node.attemptId());
            assertEquals(42, node.sequence());
        }
    }

    /** What a create with {@link QueueNode#prefix} gets back (prefix plus ten digits) parses to the same kind and id. */
    @Test
    void prefixPlusSequenceRoundTrips() {
        String name = QueueNode.prefix(NodeKind.WRITE.prefix(), ID) + "0000000007";
        assertEquals("write-" + ID + "-0000000007", name);
        QueueNode node = QueueNode.parse(name).orElseThrow();
        assertEquals(NodeKind.WRITE, NodeKind.of(node));
        assertEquals(ID, node.attemptId());
        assertEquals(7, node.sequence());
    }

    /** A sequence beyond the int range (ten digits) parses as a long. */
    @Test
    void parsesLargeSequence() {
        assertEquals(9_999_999_999L, QueueNode.parse("read-" + ID + "-9999999999").orElseThrow().sequence());
        assertEquals(0, QueueNode.parse("lock-" + ID + "-0000000000").orElseThrow().sequence());
    }

    /** Names that are not lock nodes of this library (Curator's, other tools', malformed ones) are refused. */
    @Test
    void rejectsForeignNames() {
        List<String> foreign = List.of(
                "",
                "lock",
                "lock-0000000001",                                   // no attempt id
                "lock--0000000001",                                  // empty attempt id
                "READ-" + ID + "-0000000001",                        // kinds are lower case
                "-" + ID + "-0000000001",                            // no kind
                "read-" + ID + "-000000001",                         // nine digits
                "read-" + ID + "-00000000001",                       // eleven digits
                "read-" + ID + "-00000000x1",                        // not a number
                "read-" + ID + "-",                                  // no sequence
                "write-" + ID,                                       // no sequence at all
                "_c_" + ID + "-lock-0000000001",                     // Curator InterProcessMutex
                "_c_" + ID + "-__READ__0000000001",                  // Curator read lock
                "_c_" + ID + "-__WRIT__0000000002",                  // Curator write lock
                "leases",
                "lock-" + ID + "-+000000001",                        // sign, not a digit
                "lock2-" + ID + "-0000000001",                       // a digit in the kind
                "`lock-" + ID + "-0000000001",                       // the characters either side of a to z
                "lock{-" + ID + "-0000000001",
                "read-" + ID + "-/000000001",                        // the characters either side of 0 to 9
                "read-" + ID + "-000000000:");
        for (String name : foreign) {
            assertEquals(Optional.empty(), QueueNode.parse(name), () -> "should not parse: '" + name + "'");
        }
    }

    /**
     * A node of a kind the locks do not know parses (the queue core is shared by every recipe), has
     * no lock kind, and counts as exclusive for the lock rule: it blocks rather than being overtaken.
     */
    @Test
    void unknownKindParsesAndBlocks() {
        QueueNode foreign = QueueNode.parse("mutex-" + ID + "-0000000001").orElseThrow();
        assertEquals("mutex", foreign.kind());
        assertEquals(null, NodeKind.of(foreign));
        QueueNode read = QueueNode.parse("read-" + ID + "-0000000002").orElseThrow();
        assertEquals(new io.zkcoord.queue.Turn.Watch(foreign, true),
                LockRule.decideFor(List.of(foreign, read), read));
    }

    /** The queue orders by sequence number only, although kind and attempt id sort the other way by name. */
    @Test
    void queueOrdersBySequenceOnly() {
        List<String> children = List.of(
                "lock-" + LOW_ID + "-0000000005",
                "write-" + HIGH_ID + "-0000000001",
                "read-" + LOW_ID + "-0000000004",
                "read-" + HIGH_ID + "-0000000002",
                "write-" + LOW_ID + "-0000000003");
        List<QueueNode> queue = QueueNode.queue(children);
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), queue.stream().map(QueueNode::sequence).toList());
        assertEquals(List.of(NodeKind.WRITE, NodeKind.READ, NodeKind.WRITE, NodeKind.READ, NodeKind.LOCK),
                queue.stream().map(NodeKind::of).toList());
        // Sorting by whole name would have put a read first: the mistake this guards against.
        assertEquals("lock-" + LOW_ID + "-0000000005", children.stream().sorted().findFirst().orElseThrow());
    }

    /** The queue leaves out children that are not lock nodes and keeps the rest in order. */
    @Test
    void queueLeavesOutForeignChildren() {
        List<String> children = List.of(
                "config",
                "write-" + ID + "-0000000002",
                "_c_" + ID + "-lock-0000000000",
                "read-" + ID + "-0000000001",
                "read-" + ID + "-12");
        List<QueueNode> queue = QueueNode.queue(children);
        assertEquals(List.of("read-" + ID + "-0000000001", "write-" + ID + "-0000000002"),
                queue.stream().map(QueueNode::name).toList());
    }

    /** An empty directory is an empty queue. */
    @Test
    void emptyQueue() {
        assertTrue(QueueNode.queue(List.of()).isEmpty());
    }
}
