package io.zkcoord.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The assignment node's text form, without a server. */
class ShardAssignmentTest {

    /** Any ids, ranges and holes survive a round trip; the text stays small and readable. */
    @Test
    void roundTrip() {
        ShardAssignment a = new ShardAssignment(10, Map.of(0, "w a/b", 1, "w a/b", 2, "w a/b", 5, "ünï+code", 7, "w a/b", 9, "x"));
        ShardAssignment b = ShardAssignment.decode(a.encode());
        assertEquals(a, b);
        assertEquals(List.of(0, 1, 2, 7), b.shardsOf("w a/b"));
        String text = new String(a.encode(), StandardCharsets.UTF_8);
        assertTrue(text.contains("owner w+a%2Fb 0-2,7"), text);
        ShardAssignment big = new ShardAssignment(1000, ShardSpread.spread(1000, List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"), Map.of()));
        assertTrue(big.encode().length < 1024, "1,000 shards over 10 members: " + big.encode().length + " bytes");
        assertEquals(big, ShardAssignment.decode(big.encode()));
    }

    /** Data that is not an assignment, or out-of-range shards, fail clearly. */
    @Test
    void badData() {
        assertThrows(IllegalStateException.class, () -> ShardAssignment.decode("hello".getBytes(StandardCharsets.UTF_8)));
        assertThrows(IllegalStateException.class, () -> ShardAssignment.decode(null));
        assertThrows(IllegalArgumentException.class, () -> new ShardAssignment(3, Map.of(3, "a")));
        assertThrows(IllegalArgumentException.class, () -> ShardAssignment.empty(0));
    }
}
