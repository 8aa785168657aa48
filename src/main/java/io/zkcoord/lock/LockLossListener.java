package io.zkcoord.lock;

/**
 * Told when a hold of a {@link ZkLock} is lost because its ZooKeeper session ended (expired,
 * presumed expired during a partition, or the client was closed) before the holder released it.
 * From that moment another process may hold the lock: stop acting on the guarded resource.
 *
 * <p>Runs once per lost hold, on a library thread (or on the thread that closed the client), not
 * on the holder's thread; it must be quick and must not block.
 */
@FunctionalInterface
public interface LockLossListener {

    /**
     * @param lock the lock whose hold was lost
     * @param fencingToken the token of the lost hold
     */
    void lockLost(ZkLock lock, long fencingToken);
}
