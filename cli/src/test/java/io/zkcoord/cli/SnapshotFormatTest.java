package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.inspect.QueueSnapshot;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The printed forms of a snapshot whose directory does not exist (the idle state, said as such),
 * and of nodes whose ACL withholds READ (shown as not authorized, unknown fields as such).
 */
class SnapshotFormatTest {

    private static final QueueSnapshot MISSING = new QueueSnapshot("/locks/order-7", Instant.EPOCH, List.of(), false);
    private static final QueueSnapshot EMPTY = new QueueSnapshot("/locks/order-7", Instant.EPOCH, List.of());

    /** The table says the directory does not exist and nobody holds or waits. */
    @Test
    void aMissingDirectoryIsPrintedAsIdle() {
        String table = SnapshotFormat.table(MISSING);
        assertTrue(table.startsWith("/locks/order-7: does not exist: nothing holds or waits there (an idle lock's"
                + " directory is deleted, so this is also what an idle lock looks like)"), table);
        assertTrue(SnapshotFormat.table(EMPTY).startsWith("/locks/order-7: nobody holds or waits"),
                SnapshotFormat.table(EMPTY));
    }

    /** The JSON form carries {@code exists}. */
    @Test
    void theJsonSaysWhetherTheDirectoryExists() {
        assertTrue(SnapshotFormat.json(MISSING).contains("\"exists\":false"), SnapshotFormat.json(MISSING));
        assertTrue(SnapshotFormat.json(EMPTY).contains("\"exists\":true"), SnapshotFormat.json(EMPTY));
    }

    /** A node this client may not read: a row saying "(not authorized)", a line saying why; JSON marks it and nulls the unknown. */
    @Test
    void aNodeThatCannotBeReadIsShownNotAuthorized() {
        QueueSnapshot s = new QueueSnapshot("/locks/order-7", Instant.EPOCH, List.of(
                new QueueSnapshot.Entry("lock-0a-0000000003", "lock", 3, -1, 0, null, "", -1, "", true, false),
                new QueueSnapshot.Entry("lock-0b-0000000004", "lock", 4, 17, 0x42, Instant.EPOCH, "h", 9, "t", false)));
        String table = SnapshotFormat.table(s);
        assertTrue(table.startsWith("/locks/order-7: 1 holding, 1 waiting"), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("HOLDING") && l.contains(SnapshotFormat.NOT_AUTHORIZED)
                && l.endsWith("lock-0a-0000000003")), table);
        assertTrue(table.contains("1 node is not authorized (NOAUTH)"), table);
        String json = SnapshotFormat.json(s);
        assertTrue(json.contains("\"nodeName\":\"lock-0a-0000000003\",\"kind\":\"lock\",\"holding\":true,\"sequence\":3,"
                + "\"fencingToken\":null,"), json);
        assertTrue(json.contains("\"ownerThread\":null,\"ownerReadable\":false}"), json);
        assertTrue(json.contains("\"fencingToken\":17,") && json.contains("\"ownerThread\":\"t\",\"ownerReadable\":true}"),
                json);
    }
}
