package io.zkcoord.once;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.apache.zookeeper.Op;
import org.junit.jupiter.api.Test;

/** The rule of combining, without a server: queued changes planned one after another, written as one. */
class CombinedTest {

    private static byte[] bytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    private static long value(NodeState s) {
        return s.exists() ? ByteBuffer.wrap(s.data()).getLong() : 0;
    }

    private static Change<Long> add(long delta) {
        return s -> Plan.write(bytes(value(s) + delta), value(s) + delta);
    }

    private static Change<Boolean> cas(long expect, long update) {
        return s -> value(s) == expect ? Plan.write(bytes(update), true) : Plan.done(false);
    }

    private static Change<Long> read() {
        return s -> Plan.done(value(s));
    }

    private static Change<Boolean> set(long v) {
        return s -> new Plan.Write<>(bytes(v), false, List.of(), true);
    }

    private static final NodeState SEVEN = new NodeState(true, bytes(7), 12, 3, 40);

    @Test
    void eachChangeSeesWhatTheOnesBeforeItLeft() {
        Plan<List<Object>> plan = new Combined(List.of(add(1), cas(8, 20), cas(8, 30), read(), add(-5))).plan(SEVEN);
        Plan.Write<List<Object>> write = assertInstanceOf(Plan.Write.class, plan);
        assertEquals(Arrays.asList(8L, true, false, 20L, 15L), write.result());
        assertArrayEquals(bytes(15), write.data());
        assertTrue(write.guarded());
        assertTrue(write.extra().isEmpty());
    }

    @Test
    void onlySetsMakeAnUnguardedWrite() {
        Plan.Write<?> sets = assertInstanceOf(Plan.Write.class, new Combined(List.of(set(1), set(2))).plan(SEVEN));
        assertFalse(sets.guarded());
        assertArrayEquals(bytes(2), sets.data());
        Plan.Write<?> setThenAdd = assertInstanceOf(Plan.Write.class, new Combined(List.of(set(1), add(1))).plan(SEVEN));
        assertTrue(setThenAdd.guarded(), "an addition is guarded");
        Plan.Write<?> readThenSet = assertInstanceOf(Plan.Write.class, new Combined(List.of(read(), set(3))).plan(SEVEN));
        assertTrue(readThenSet.guarded(), "the read's answer holds only if the node did not change before the write");
    }

    @Test
    void noWriteAnswersWithoutOne() {
        Plan<List<Object>> plan = new Combined(List.of(read(), cas(1, 2), read())).plan(SEVEN);
        Plan.Done<List<Object>> done = assertInstanceOf(Plan.Done.class, plan);
        assertEquals(Arrays.asList(7L, false, 7L), done.result());
    }

    @Test
    void aMissingNodeIsMadeWithTheLastValue() {
        Plan.Write<?> write = assertInstanceOf(Plan.Write.class,
                new Combined(List.of(read(), add(2), add(3))).plan(NodeState.MISSING));
        assertEquals(Arrays.asList(0L, 2L, 5L), write.result());
        assertArrayEquals(bytes(5), write.data());
    }

    @Test
    void aChangeThatThrowsFailsAloneAndTheRestArePlannedWithoutIt() {
        IllegalStateException cannotDecode = new IllegalStateException("cannot decode");
        Change<Long> broken = s -> {
            throw cannotDecode;
        };
        Plan.Write<List<Object>> write = assertInstanceOf(Plan.Write.class,
                new Combined(List.of(add(1), broken, add(2))).plan(SEVEN));
        assertEquals(Arrays.asList(8L, new Combined.Failed(cannotDecode), 10L), write.result());
        assertArrayEquals(bytes(10), write.data());
        Plan.Write<?> failThenSet = assertInstanceOf(Plan.Write.class, new Combined(List.of(broken, set(3))).plan(SEVEN));
        assertTrue(failThenSet.guarded(), "the failure was taken on the state seen: only if it is still the node's");
        Plan.Done<List<Object>> none = assertInstanceOf(Plan.Done.class, new Combined(List.of(broken, read())).plan(SEVEN));
        assertEquals(Arrays.asList(new Combined.Failed(cannotDecode), 7L), none.result());
    }

    @Test
    void extraOperationsAreNotCombined() {
        Change<Boolean> gated = s -> new Plan.Write<>(bytes(1), true, List.of(Op.check("/gate", 0)), true);
        assertThrows(IllegalStateException.class, () -> new Combined(List.of(add(1), gated)).plan(SEVEN));
        assertThrows(IllegalArgumentException.class, () -> new Combined(List.of()));
    }
}
