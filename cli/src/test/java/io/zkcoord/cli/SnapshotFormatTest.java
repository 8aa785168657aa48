package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.inspect.QueueSnapshot;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The printed forms of a snapshot whose directory does not exist: the idle state, said as such. */
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
}
