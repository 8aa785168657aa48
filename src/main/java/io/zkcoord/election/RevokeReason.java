package io.zkcoord.election;

/** Why a leader stopped leading, or a shard member stopped owning a shard. */
public enum RevokeReason {
    /** The client lost its connection: the session may be gone, so the leader steps down at once. */
    SUSPENDED,
    /** The session ended (expired, or presumed expired during a partition): another may lead. */
    LOST,
    /** {@link ZkLeaderElection#close()} (or the shard member's {@code close()}) was called. */
    CLOSED,
    /**
     * Shards only ({@link io.zkcoord.shard.ZkShardMember}): the group's balance gave the shard to
     * another member, after a member joined or left. Never told by an election.
     */
    MOVED
}
