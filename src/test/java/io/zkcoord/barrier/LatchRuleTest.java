package io.zkcoord.barrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.util.List;
import java.util.Optional;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/** The latch's and the double barrier's rules without a server. */
class LatchRuleTest {

    private static NodeState holding(long generation, int count) {
        return new NodeState(true, LatchRule.encode(new LatchRule.Round(generation, count)), 3, 1, 2);
    }

    @Test
    void armingMakesTheNextRoundsGate() {
        Plan.Write<Boolean> w = assertInstanceOf(Plan.Write.class,
                LatchRule.arm("/l", 3, ZooDefs.Ids.OPEN_ACL_UNSAFE).plan(holding(4, 0)));
        assertEquals(new LatchRule.Round(5, 3), LatchRule.round("/l", new NodeState(true, w.data(), 0, 1, 1)));
        assertEquals("/l/round-5", w.extra().get(0).getPath());
        assertInstanceOf(Plan.Done.class, LatchRule.arm("/l", 3, ZooDefs.Ids.OPEN_ACL_UNSAFE).plan(holding(4, 1)));
        assertInstanceOf(Plan.Write.class, LatchRule.arm("/l", 1, ZooDefs.Ids.OPEN_ACL_UNSAFE).plan(NodeState.MISSING));
    }

    @Test
    void theLastCountDownDeletesTheGateInTheSameWrite() {
        Plan.Write<LatchRule.Round> mid = assertInstanceOf(Plan.Write.class, LatchRule.countDown("/l").plan(holding(2, 2)));
        assertTrue(mid.extra().isEmpty());
        Plan.Write<LatchRule.Round> last = assertInstanceOf(Plan.Write.class, LatchRule.countDown("/l").plan(holding(2, 1)));
        assertEquals("/l/round-2", last.extra().get(0).getPath());
        assertInstanceOf(Plan.Done.class, LatchRule.countDown("/l").plan(holding(2, 0)));
        assertInstanceOf(Plan.Done.class, LatchRule.countDown("/l").plan(NodeState.MISSING));
    }

    @Test
    void leavingLowestLastOthersWatchTheLowest() {
        List<String> all = DoubleBarrierRule.members(List.of("ready", "member-b", "member-a", "member-c", "zkcoord-once-1"));
        assertEquals(List.of("member-a", "member-b", "member-c"), all);
        assertEquals(new DoubleBarrierRule.LeaveStep(false, Optional.of("member-c")), DoubleBarrierRule.leave(all, "member-a"));
        assertEquals(new DoubleBarrierRule.LeaveStep(true, Optional.of("member-a")), DoubleBarrierRule.leave(all, "member-b"));
        assertEquals(new DoubleBarrierRule.LeaveStep(true, Optional.empty()), DoubleBarrierRule.leave(List.of("member-a"), "member-a"));
        assertEquals(new DoubleBarrierRule.LeaveStep(false, Optional.empty()), DoubleBarrierRule.leave(List.of(), "member-a"));
        assertEquals(new DoubleBarrierRule.LeaveStep(false, Optional.of("member-a")),
                DoubleBarrierRule.leave(List.of("member-a"), "member-b"));
        assertTrue(DoubleBarrierRule.full(all, 3));
    }
}
