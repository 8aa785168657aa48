package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zkcoord.CoordinationException;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The counter's and the shared value's rules without a server. */
class ValueRulesTest {

    private static NodeState holding(long v, int version) {
        return new NodeState(true, ByteBuffer.allocate(8).putLong(v).array(), version, 1, 2);
    }

    @Test
    void counterAddsToWhatItSees() {
        Plan<Long> p = CounterRule.add("/c", 5).plan(holding(10, 3));
        Plan.Write<Long> w = assertInstanceOf(Plan.Write.class, p);
        assertEquals(15L, w.result());
        assertArrayEquals(ByteBuffer.allocate(8).putLong(15).array(), w.data());
        assertEquals(true, w.guarded());
        assertEquals(5L, ((Plan.Write<Long>) CounterRule.add("/c", 5).plan(NodeState.MISSING)).result(), "missing reads 0");
        assertEquals(Long.MIN_VALUE, ((Plan.Write<Long>) CounterRule.add("/c", 1).plan(holding(Long.MAX_VALUE, 0))).result());
        assertInstanceOf(Plan.Done.class, CounterRule.add("/c", 0).plan(holding(3, 0)));
    }

    @Test
    void counterCompareAndSet() {
        assertInstanceOf(Plan.Write.class, CounterRule.compareAndSet("/c", 0, 9).plan(NodeState.MISSING));
        assertEquals(Boolean.FALSE, ((Plan.Done<Boolean>) CounterRule.compareAndSet("/c", 1, 9).plan(holding(2, 0))).result());
        assertEquals(false, ((Plan.Write<Boolean>) CounterRule.set(4).plan(holding(2, 0))).guarded());
    }

    @Test
    void counterRejectsDataThatIsNotEightBytes() {
        NodeState bad = new NodeState(true, new byte[4], 0, 1, 1);
        assertThrows(CoordinationException.class, () -> CounterRule.add("/c", 1).plan(bad));
        assertEquals(0L, CounterRule.value("/c", new NodeState(true, new byte[0], 0, 1, 1)), "empty data reads 0, as Curator");
    }

    @Test
    void codecsAreCuratorsFormats() {
        assertArrayEquals(new byte[] {0, 0, 1, 0}, Codec.INT.encode(256));
        assertEquals(-2, Codec.INT.decode("/x", new byte[] {-1, -1, -1, -2}));
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 1, 0}, Codec.LONG.encode(256L));
        assertThrows(CoordinationException.class, () -> Codec.INT.decode("/x", new byte[3]));
    }

    @Test
    void trySetOnlyAtTheSameVersionAndNeverAtMinusOne() {
        NodeState at7 = new NodeState(true, new byte[4], 7, 1, 2);
        assertInstanceOf(Plan.Write.class, ValueRule.trySet(7, new byte[4], new byte[4]).plan(at7));
        assertEquals(Boolean.FALSE, ((Plan.Done<Boolean>) ValueRule.trySet(6, new byte[4], new byte[4]).plan(at7)).result());
        assertEquals(Boolean.FALSE, ((Plan.Done<Boolean>) ValueRule.trySet(7, new byte[4], new byte[4]).plan(NodeState.MISSING)).result());
        NodeState atMinusOne = new NodeState(true, new byte[4], -1, 1, 2);
        assertInstanceOf(Plan.Done.class, ValueRule.trySet(-1, new byte[4], new byte[4]).plan(atMinusOne), "-1 would mean any version");
        assertEquals(Boolean.FALSE, ((Plan.Done<Boolean>) ValueRule.trySet(7, new byte[] {0, 0, 0, 1}, new byte[4])
                .plan(at7)).result(), "the right version with a value the node did not hold at it");
        NodeState wrapped = new NodeState(true, new byte[4], Integer.MIN_VALUE, 1, 2);
        assertInstanceOf(Plan.Write.class, ValueRule.trySet(Integer.MIN_VALUE, new byte[4], new byte[4]).plan(wrapped));
    }

    @Test
    void seedOnlyWhenMissing() {
        assertInstanceOf(Plan.Write.class, ValueRule.seed(new byte[4]).plan(NodeState.MISSING));
        assertInstanceOf(Plan.Done.class, ValueRule.seed(new byte[4]).plan(holding(1, 1)));
    }

    @Test
    void newestSeenIsByZxidAcrossTheVersionWrap() {
        NodeState old = new NodeState(true, new byte[4], Integer.MAX_VALUE, 5, 50);
        NodeState next = new NodeState(true, new byte[4], Integer.MIN_VALUE, 5, 51);
        assertEquals(true, ValueRule.replaces(old, next));
        assertEquals(false, ValueRule.replaces(next, old));
        assertEquals(false, ValueRule.replaces(next, NodeState.MISSING));
    }
}
