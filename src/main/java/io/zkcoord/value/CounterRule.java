package io.zkcoord.value;

import io.zkcoord.once.Change;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.util.List;

/**
 * The counter's rule: each operation of {@link ZkAtomicLong} as a pure function of the node's
 * state, in Curator's {@code DistributedAtomicLong} format (8 bytes, big-endian; a missing node
 * reads 0). Stateless; tested without a server.
 */
final class CounterRule {

    private CounterRule() {
    }

    /** @return the value a state holds: 0 for a missing node */
    static long value(String path, NodeState state) {
        return state.exists() ? Codec.LONG.decode(path, state.data()) : 0L;
    }

    /** @return the current value, without a write */
    static Change<Long> read(String path) {
        return state -> Plan.done(value(path, state));
    }

    /** @return add {@code delta} (wrapping on overflow, as {@link java.util.concurrent.atomic.AtomicLong}); the new value */
    static Change<Long> add(String path, long delta) {
        return state -> {
            long current = value(path, state);
            if (delta == 0) {
                return Plan.done(current);
            }
            long next = current + delta;
            return Plan.write(Codec.LONG.encode(next), next);
        };
    }

    /** @return write {@code update} if the value is {@code expect}; whether it was written */
    static Change<Boolean> compareAndSet(String path, long expect, long update) {
        return state -> value(path, state) == expect
                ? Plan.write(Codec.LONG.encode(update), Boolean.TRUE)
                : Plan.done(Boolean.FALSE);
    }

    /** @return write {@code value} whatever the node holds */
    static Change<Boolean> set(long value) {
        return state -> new Plan.Write<>(Codec.LONG.encode(value), false, List.of(), Boolean.TRUE);
    }
}
