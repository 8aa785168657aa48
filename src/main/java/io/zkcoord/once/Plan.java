package io.zkcoord.once;

import java.util.List;
import org.apache.zookeeper.Op;

/**
 * What an operation does to a node in the state it was last seen in: write it, or answer without
 * writing. Immutable.
 *
 * @param <R> what the operation returns
 */
public sealed interface Plan<R> {

    /**
     * Write {@code data} (making the node if it is missing).
     *
     * @param data the new data
     * @param guarded true: only if the node still has the version it was seen with (a conditional
     *     write); false: whatever its version (a {@code set}); applied at most once either way
     * @param extra more operations of the same transaction (a latch's gate node), or none
     * @param result what the operation returns once this write is applied
     * @param <R> what the operation returns
     */
    record Write<R>(byte[] data, boolean guarded, List<Op> extra, R result) implements Plan<R> {
        /** Defensive copies. */
        public Write {
            data = data.clone();
            extra = List.copyOf(extra);
        }

        @Override
        public byte[] data() {
            return data.clone();
        }
    }

    /**
     * Answer without writing. Taken only on a state read during the operation, never on one
     * remembered from an earlier operation: on such a state the node is read again first.
     *
     * @param result the answer
     * @param <R> what the operation returns
     */
    record Done<R>(R result) implements Plan<R> {
    }

    /** @return a guarded write of {@code data} returning {@code result} */
    static <R> Plan<R> write(byte[] data, R result) {
        return new Write<>(data, true, List.of(), result);
    }

    /** @return an answer without a write */
    static <R> Plan<R> done(R result) {
        return new Done<>(result);
    }
}
