package io.zkcoord.value;

import io.zkcoord.once.Change;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * The shared value's rule: {@link ZkSharedValue}'s writes as pure functions of the node's state.
 * Stateless; tested without a server.
 */
final class ValueRule {

    private ValueRule() {
    }

    /** @return make the node with {@code seed} if it is missing; whether it was made */
    static Change<Boolean> seed(byte[] seed) {
        return state -> state.exists() ? Plan.done(Boolean.FALSE) : Plan.write(seed, Boolean.TRUE);
    }

    /** @return write {@code data} whatever the node holds (made if missing) */
    static Change<Boolean> set(byte[] data) {
        return state -> new Plan.Write<>(data, false, List.of(), Boolean.TRUE);
    }

    /**
     * Writes {@code data} only if the node still has {@code previousVersion} and, at that version,
     * {@code previousData} (a previous value the node never had at that version is refused too,
     * as Curator's {@code SharedCount.trySetCount} does). Never sends version -1 (ZooKeeper's "any
     * version"): a previous version of -1 gets false without a request, since nothing can guard a
     * write at that version.
     *
     * @return whether it was written
     */
    static Change<Boolean> trySet(int previousVersion, byte[] previousData, byte[] data) {
        return trySet(previousVersion, held -> Arrays.equals(held, previousData), data);
    }

    /**
     * As {@link #trySet(int, byte[], byte[])}, the previous value told by {@code holdsPrevious}: whether
     * the node's data is that value (in a format with more than one form of a value, such as a long's
     * empty data, which reads 0, any of them).
     *
     * @return whether it was written
     */
    static Change<Boolean> trySet(int previousVersion, Predicate<byte[]> holdsPrevious, byte[] data) {
        return state -> state.exists() && state.version() == previousVersion && previousVersion != -1
                && holdsPrevious.test(state.data())
                ? Plan.write(data, Boolean.TRUE)
                : Plan.done(Boolean.FALSE);
    }

    /**
     * @param seen the newest state seen so far, or null
     * @param candidate a state just read or written
     * @return whether {@code candidate} should replace {@code seen}: it is newer by the ensemble's
     *     order (zxids, never the version, which wraps)
     */
    static boolean replaces(NodeState seen, NodeState candidate) {
        return candidate.exists() && candidate.newerThan(seen);
    }
}
