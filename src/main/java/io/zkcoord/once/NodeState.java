package io.zkcoord.once;

import java.util.Arrays;
import org.apache.zookeeper.data.Stat;

/**
 * One node as read (or as written by us): whether it exists, its data, its version, and the
 * zxids that order its states. Immutable (the data array is never handed out to be changed).
 *
 * @param exists whether the node exists
 * @param data its data; empty when missing
 * @param version its data version; 0 when missing
 * @param czxid the transaction that created it; 0 when missing or not known
 * @param mzxid the transaction that last wrote it; 0 when missing or not known
 */
public record NodeState(boolean exists, byte[] data, int version, long czxid, long mzxid) {

    /** A node that does not exist. */
    public static final NodeState MISSING = new NodeState(false, new byte[0], 0, 0, 0);

    /** Defensive copy. */
    public NodeState {
        data = data == null ? new byte[0] : data.clone();
    }

    /** @return the state of an existing node, from a read's data and stat */
    public static NodeState of(byte[] data, Stat stat) {
        return new NodeState(true, data, stat.getVersion(), stat.getCzxid(), stat.getMzxid());
    }

    /** @return a copy of the data */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /**
     * Whether this state was written after {@code other}, by the ensemble's order: a node made
     * again (a later {@code czxid}) is newer; within one node, the later {@code mzxid}. Never by
     * {@code version}, which wraps from {@link Integer#MAX_VALUE} to {@link Integer#MIN_VALUE}
     * and restarts at 0 when the node is made again (Curator's SharedValue stopped updating once
     * the version overflowed because it compared versions).
     *
     * @param other a state seen before, or null
     * @return true if this state is newer, or {@code other} is null; false for a missing node or
     *     a state whose zxids are not known (0)
     */
    public boolean newerThan(NodeState other) {
        if (other == null) {
            return true;
        }
        if (!exists || mzxid == 0) {
            return false;
        }
        if (czxid != other.czxid) {
            return czxid > other.czxid;
        }
        return mzxid > other.mzxid;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeState s && exists == s.exists && version == s.version && czxid == s.czxid
                && mzxid == s.mzxid && Arrays.equals(data, s.data);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(data) * 31 + version;
    }

    @Override
    public String toString() {
        return exists ? "NodeState[" + data.length + " bytes, version " + version + ", mzxid 0x"
                + Long.toHexString(mzxid) + "]" : "NodeState[missing]";
    }
}
