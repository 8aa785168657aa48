package io.zkcoord.shard;

import io.zkcoord.election.RevokeReason;

/**
 * Hears a {@link ZkShardMember} gain and lose shards. For each shard, {@code assigned} and {@code
 * revoked} strictly alternate, starting with {@code assigned}. Called one at a time, in order, on a
 * library thread (never ZooKeeper's); it must be quick. Whatever it throws is logged and the other
 * listeners are still told.
 */
public interface ShardListener {

    /**
     * This member owns {@code shard} from now on.
     *
     * @param shard the shard, {@code 0..shards-1}
     * @param fencingToken the {@code czxid} of this ownership's node: greater than every earlier
     *     owner's token for this shard; pass it with every write the shard's work makes
     */
    void assigned(int shard, long fencingToken);

    /**
     * This member no longer owns {@code shard}: stop its work now. For {@code MOVED} and {@code
     * CLOSED} the shard's lock is released only after every listener has returned from this call,
     * so the next owner starts only after the work here stopped. For {@code SUSPENDED} and {@code
     * LOST} the session may already be gone, and another member may own the shard already: writes
     * must be fenced with the token.
     *
     * @param shard the shard
     * @param fencingToken the token {@code assigned} gave
     * @param reason {@link RevokeReason#MOVED} (the balance gave it to another member), {@link
     *     RevokeReason#SUSPENDED} (the connection dropped; it may come back with the same token),
     *     {@link RevokeReason#LOST} (the session ended) or {@link RevokeReason#CLOSED}
     */
    void revoked(int shard, long fencingToken, RevokeReason reason);
}
