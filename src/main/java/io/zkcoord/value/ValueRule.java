package io.zkcoord.value;

import io.zkcoord.once.Change;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.Plan;
import java.util.Arrays;
import java.util.List;

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
        return state -> state.exists() && state.version() == previousVersion && previousVersion != -1
                && Arrays.equals(state.data(), previousData)
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
