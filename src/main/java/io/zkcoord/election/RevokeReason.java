package io.zkcoord.election;

/** Why a leader stopped leading. */
public enum RevokeReason {
    /** The client lost its connection: the session may be gone, so the leader steps down at once. */
    SUSPENDED,
    /** The session ended (expired, or presumed expired during a partition): another may lead. */
    LOST,
    /** {@link ZkLeaderElection#close()} was called. */
    CLOSED
}
