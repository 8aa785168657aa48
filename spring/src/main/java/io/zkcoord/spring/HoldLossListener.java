package io.zkcoord.spring;

/**
 * Told when a thread's hold of a {@link ZkcoordLock} ends without that thread's {@code unlock()}:
 * its time to live ran out, or its ZooKeeper session ended. From that moment another thread or
 * process may hold the lock: stop acting on the guarded resource. The holder's next {@code
 * unlock()} throws {@link java.util.ConcurrentModificationException}.
 *
 * <p>Runs once per ended hold, on a library thread, never on the holder's thread; it must be quick
 * and must not block. Whatever it throws is logged and ignored.
 */
@FunctionalInterface
public interface HoldLossListener {

    /** Why a hold ended. */
    enum Cause {
        /** The hold's time to live passed without a renewal; its node was deleted. */
        TTL_EXPIRED,
        /** The ZooKeeper session of the hold ended (expired, presumed expired, or the client was closed). */
        SESSION_ENDED
    }

    /**
     * @param lock the lock whose hold ended
     * @param owner the thread that held it
     * @param fencingToken the token of the ended hold
     * @param cause why it ended
     */
    void holdLost(ZkcoordLock lock, Thread owner, long fencingToken, Cause cause);
}
