package io.zkcoord.observe;

/**
 * Which recipe an acquisition or hold belongs to. {@link #tag()} is its short name, as metrics
 * and Flight Recorder events show it.
 *
 * <p>An enum: immutable and safe to share between threads.
 */
public enum Recipe {
    /** {@code ZkMutex}. */
    MUTEX("mutex"),
    /** The read side of {@code ZkReadWriteLock}. */
    READ("read"),
    /** The write side of {@code ZkReadWriteLock}. */
    WRITE("write"),
    /** {@code ZkSemaphore}: a hold is one permit. */
    SEMAPHORE("semaphore"),
    /** {@code ZkLeaderElection}: a hold is one period of leadership, from {@code elected} to {@code revoked}. */
    ELECTION("election"),
    /** A lock on several paths at once: one node in each path's queue, held together. */
    MULTI("multi");

    private final String tag;

    Recipe(String tag) {
        this.tag = tag;
    }

    /** @return the short lower-case name: {@code mutex}, {@code read}, {@code write}, {@code semaphore}, {@code election}, {@code multi} */
    public String tag() {
        return tag;
    }
}
