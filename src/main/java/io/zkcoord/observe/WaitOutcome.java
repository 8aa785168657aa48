package io.zkcoord.observe;

/**
 * How a wait for a lock, lease, permit or leadership ended.
 *
 * <p>An enum: immutable and safe to share between threads.
 */
public enum WaitOutcome {
    /** The hold was granted. */
    GRANTED,
    /** The time given ran out ({@code tryLock(time)}, {@code tryAcquire(time)}), or a one-look {@code tryLock()} found it taken. */
    TIMED_OUT,
    /**
     * The caller gave up: the waiting thread was interrupted, the future of {@code acquireAsync()}
     * was completed otherwise (cancelled, {@code orTimeout}), or a participant left the election.
     */
    ABANDONED,
    /** The acquisition threw: the client closed, or the ensemble refused (the retry policy gave up, no permission, ...). */
    FAILED;

    /** @return the lower-case name, as metrics and Flight Recorder events show it: {@code granted}, {@code timed_out}, ... */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
