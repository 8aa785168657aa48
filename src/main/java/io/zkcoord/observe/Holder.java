package io.zkcoord.observe;

/**
 * What a hold belongs to.
 *
 * <p>An enum: immutable and safe to share between threads.
 */
public enum Holder {
    /** A thread, through the {@code java.util.concurrent.locks.Lock} methods ({@code lock}, {@code tryLock}, ...). */
    THREAD,
    /** A {@code ZkLease} object ({@code acquire}, {@code tryAcquire}, {@code acquireAsync}). */
    LEASE,
    /** A {@code ZkLeaderElection} participant. */
    PARTICIPANT
}
