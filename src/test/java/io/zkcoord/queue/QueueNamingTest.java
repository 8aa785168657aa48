package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Both name forms parse, and each protocol orders a mixed directory as it must; no server. */
class QueueNamingTest {

    private static final String UUID_A = "8b3c6a1e-5f0c-4d2a-9e11-0123456789ab";
    private static final String UUID_B = "00000000-ffff-4aaa-8bbb-cccccccccccc";
    private static final String HEX = "5f0c0d2a9e110123456789ab8b3c6a1e";

    private static String curator(String uuid, String lockName, long seq) {
        return "_c_" + uuid + "-" + lockName + String.format("%010d", seq);
    }

    private static String ours(String kind, long seq) {
        return kind + "-" + HEX + "-" + String.format("%010d", seq);
    }

    private static List<String> names(List<QueueNode> queue) {
        return queue.stream().map(QueueNode::name).toList();
    }

    /** Every Curator lock name parses to the kind of ours that does the same, with the UUID as attempt id. */
    @Test
    void curatorNamesParseToOurKinds() {
        String[][] cases = {{"lock-", "lock"}, {"__WRIT__", "write"}, {"__READ__", "read"}, {"latch-", "leader"},
            {"lease-", CuratorNames.UNKNOWN_KIND}};
        for (String[] c : cases) {
            QueueNode n = QueueNode.parse(curator(UUID_A, c[0], 42)).orElseThrow();
            assertEquals(c[1], n.kind(), c[0]);
            assertEquals(UUID_A, n.attemptId());
            assertEquals(42, n.sequence());
            assertTrue(n.curatorForm());
        }
        assertFalse(QueueNode.parse(ours("lock", 1)).orElseThrow().curatorForm());
    }

    /** Names that only look like Curator's are not queue nodes. */
    @Test
    void malformedCuratorNamesDoNotParse() {
        for (String name : List.of("_c_", "_c_" + UUID_A + "-lock-", "_c_" + UUID_A + "-lock-12345",
                "_c_" + UUID_A.replace('-', 'x') + "-lock-0000000001", "_c_" + UUID_A + "lock-0000000001",
                "_c_" + UUID_A + "-lock-00000000x1", "_c_zzzzzzzz-5f0c-4d2a-9e11-0123456789ab-lock-0000000001")) {
            assertEquals(Optional.empty(), QueueNode.parse(name), name);
        }
    }

    /** The prefix a CURATOR recipe creates with is Curator's, and parses back once the sequence is added. */
    @Test
    void curatorPrefixIsCuratorsName() {
        UUID id = UUID.fromString(UUID_A);
        assertEquals("_c_" + UUID_A + "-lock-", CuratorNames.prefix("lock", id));
        assertEquals("_c_" + UUID_A + "-__WRIT__", CuratorNames.prefix("write", id));
        assertEquals("_c_" + UUID_A + "-__READ__", CuratorNames.prefix("read", id));
        assertEquals("_c_" + UUID_A + "-latch-", CuratorNames.prefix("leader", id));
        assertThrows(IllegalArgumentException.class, () -> CuratorNames.prefix("multi", id));
        String made = QueueNaming.curator(CuratorNames.MUTEX).newPrefix("lock");
        QueueNode back = QueueNode.parse(made + "0000000007").orElseThrow();
        assertEquals("lock", back.kind());
        assertTrue(QueueNaming.ZKCOORD.newPrefix("lock").startsWith("lock-"));
    }

    /** Curator's sort key: the text after the last occurrence of the lock name, or the whole name. */
    @Test
    void sortKeyIsCuratorsFixForSorting() {
        assertEquals("0000000042", CuratorNames.sortKey(curator(UUID_A, "lock-", 42), List.of("lock-")));
        assertEquals(HEX + "-0000000042", CuratorNames.sortKey(ours("lock", 42), List.of("lock-")));
        String read = curator(UUID_A, "__READ__", 42);
        assertEquals(read, CuratorNames.sortKey(read, List.of("lock-")));
        assertEquals("0000000042", CuratorNames.sortKey(read, List.of("__READ__", "__WRIT__")));
        assertEquals("0000000043", CuratorNames.sortKey(curator(UUID_A, "__WRIT__", 43), List.of("__READ__", "__WRIT__")));
    }

    /** Under either protocol, Curator's and our nodes of one directory interleave by sequence. */
    @Test
    void mixedFormsQueueBySequenceUnderBoth() {
        List<String> children = new ArrayList<>(List.of(curator(UUID_A, "lock-", 5), ours("lock", 3),
                curator(UUID_B, "lock-", 1), ours("lock", 12), curator(UUID_A, "lock-", 9), "not-a-node"));
        List<String> expected = List.of(curator(UUID_B, "lock-", 1), ours("lock", 3), curator(UUID_A, "lock-", 5),
                curator(UUID_A, "lock-", 9), ours("lock", 12));
        Random random = new Random(7);
        for (int i = 0; i < 20; i++) {
            Collections.shuffle(children, random);
            assertEquals(expected, names(QueueNaming.ZKCOORD.queue(children)));
            assertEquals(expected, names(QueueNaming.of(Protocol.CURATOR, CuratorNames.MUTEX).queue(children)));
        }
    }

    /**
     * CURATOR puts a node of another Curator lock name where Curator does: by its whole name, after
     * every sequence key; ZKCOORD counts it in sequence order (it never ignores a Curator node).
     */
    @Test
    void otherCuratorLockNamesGoLastAsCuratorPutsThem() {
        String write = curator(UUID_A, "__WRIT__", 1);
        List<String> children = List.of(curator(UUID_B, "lock-", 4), write, curator(UUID_A, "lock-", 2));
        assertEquals(List.of(curator(UUID_A, "lock-", 2), curator(UUID_B, "lock-", 4), write),
                names(QueueNaming.curator(CuratorNames.MUTEX).queue(children)));
        assertEquals(List.of(write, curator(UUID_A, "lock-", 2), curator(UUID_B, "lock-", 4)),
                names(QueueNaming.ZKCOORD.queue(children)));
    }

    /** A read/write lock orders both Curator sides by sequence, and a downgrade's read (same sequence) next to its write. */
    @Test
    void readWriteOrderKeepsDowngradeBesideItsWrite() {
        String write = curator(UUID_A, "__WRIT__", 7);
        String downgrade = curator(UUID_A, "__READ__", 7);
        List<String> children = List.of(curator(UUID_B, "__READ__", 9), downgrade, write, curator(UUID_B, "__WRIT__", 3));
        List<String> queue = names(QueueNaming.curator(CuratorNames.READ, CuratorNames.WRITE).queue(children));
        assertEquals(curator(UUID_B, "__WRIT__", 3), queue.get(0));
        assertEquals(List.of(downgrade, write), queue.subList(1, 3).stream().sorted().toList());
        assertEquals(curator(UUID_B, "__READ__", 9), queue.get(3));
        assertEquals(queue, names(QueueNaming.curator(CuratorNames.READ, CuratorNames.WRITE)
                .queue(List.of(write, curator(UUID_B, "__WRIT__", 3), downgrade, curator(UUID_B, "__READ__", 9)))),
                "ties break the same way whatever order the server lists the children in");
    }

    /**
     * An election orders as LeaderLatch does: latch nodes (and ours) by sequence; a LeaderSelector's
     * node (lock-) by its whole name, after them, as LeaderLatch puts it.
     */
    @Test
    void electionOrdersAsLeaderLatch() {
        List<String> children = List.of(curator(UUID_A, "latch-", 4), curator(UUID_B, "lock-", 1), ours("leader", 2),
                curator(UUID_B, "latch-", 3));
        assertEquals(List.of(ours("leader", 2), curator(UUID_B, "latch-", 3), curator(UUID_A, "latch-", 4),
                curator(UUID_B, "lock-", 1)), names(QueueNaming.curator(CuratorNames.LATCH).queue(children)));
    }

    /** ZKCOORD writes our data (owner text); CURATOR writes Curator's default, an IP address. */
    @Test
    void dataPerProtocol() {
        assertTrue(new String(QueueNaming.ZKCOORD.ownerData()).startsWith("host="));
        String address = new String(QueueNaming.curator(CuratorNames.MUTEX).ownerData());
        assertTrue(address.matches("[0-9a-fA-F:.%a-z]+"), address);
        assertThrows(IllegalArgumentException.class, () -> QueueNaming.of(null));
    }
}
