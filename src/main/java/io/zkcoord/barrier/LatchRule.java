package io.zkcoord.barrier;

import io.zkcoord.CoordinationException;
import io.zkcoord.once.Change;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.data.ACL;

/**
 * The latch's rule, without a server. The latch node holds its round (a generation that only
 * grows) and that round's count; while a round's count runs, its gate node {@code
 * round-<generation>} exists beside the markers. Arming makes the next round's gate in the same
 * transaction as its count; the count-down that reaches zero deletes it in the same transaction.
 * A waiter of round g waits for gate g to go, so it passes once round g opened, whatever rounds
 * came after. Stateless.
 */
final class LatchRule {

    /** The gate's name prefix. */
    static final String GATE_PREFIX = "round-";

    private LatchRule() {
    }

    /**
     * A round of the latch.
     *
     * @param generation the round's number: 0 before the first arming, then one more per arming
     * @param count what is left of its count; 0 when open
     */
    record Round(long generation, int count) {
        boolean open() {
            return count == 0;
        }
    }

    /** @return the round a state holds: round 0, open, for a missing node */
    static Round round(String path, NodeState state) {
        if (!state.exists()) {
            return new Round(0, 0);
        }
        byte[] data = state.data();
        if (data.length != Long.BYTES + Integer.BYTES) {
            throw new CoordinationException(path + " holds " + data.length + " bytes, not a latch's 12");
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        return new Round(b.getLong(), b.getInt());
    }

    static byte[] encode(Round round) {
        return ByteBuffer.allocate(Long.BYTES + Integer.BYTES).putLong(round.generation()).putInt(round.count()).array();
    }

    /** @return the gate of a round */
    static String gate(String path, long generation) {
        return path + "/" + GATE_PREFIX + generation;
    }

    /** @return arm the next round with {@code count} if the latch is open; whether it was armed */
    static Change<Boolean> arm(String path, int count, List<ACL> gateAcl) {
        return state -> {
            Round now = round(path, state);
            if (!now.open()) {
                return Plan.done(Boolean.FALSE);
            }
            Round next = new Round(now.generation() + 1, count);
            Op makeGate = Op.create(gate(path, next.generation()), new byte[0], gateAcl, CreateMode.PERSISTENT);
            return new Plan.Write<>(encode(next), true, List.of(makeGate), Boolean.TRUE);
        };
    }

    /** @return count down by one if a count runs (opening the round at zero); the round counted down, or null if open */
    static Change<Round> countDown(String path) {
        return state -> {
            Round now = round(path, state);
            if (now.open()) {
                return Plan.done(null);
            }
            Round next = new Round(now.generation(), now.count() - 1);
            List<Op> extra = next.open() ? List.of(Op.delete(gate(path, now.generation()), -1)) : List.of();
            return new Plan.Write<>(encode(next), true, extra, now);
        };
    }

    /** @return the current round, without a write */
    static Change<Round> read(String path) {
        return state -> Plan.done(round(path, state));
    }
}
