package io.zkcoord.lock;

import io.zkcoord.ZkClient;

/**
 * A fair, reentrant, exclusive lock shared by every process that uses the same lock path on the
 * same ZooKeeper ensemble: ZooKeeper's lock recipe, with predecessor-only watches.
 *
 * <pre>{@code
 * ZkMutex mutex = new ZkMutex(client, "/locks/orders");
 * mutex.lock();
 * try {
 *     orders.write(order, mutex.fencingToken());   // the resource refuses stale tokens
 * } finally {
 *     mutex.unlock();
 * }
 * }</pre>
 *
 * <p>Waiters queue in order of arrival (FIFO) as {@code EPHEMERAL_SEQUENTIAL} nodes under the lock
 * path; each waits for its immediate predecessor only, so a release wakes exactly one waiter, in
 * this JVM or another. If a holder dies, its session ends and its node goes: no deadlock. See
 * {@link ZkLock} for the full contract: blocking, interrupts, timeouts, reentrancy, fencing tokens
 * and session loss.
 *
 * <p>Thread-safe. Holds belong to threads: two threads using one {@code ZkMutex}, or two {@code
 * ZkMutex} objects for the same path on one {@link ZkClient}, exclude each other as two processes
 * do. Lock objects are cheap; create one per path and keep it, or create them as needed.
 */
public final class ZkMutex extends EngineLock {

    /**
     * @param client the client whose session holds the lock
     * @param path the lock directory, e.g. {@code /locks/orders}; created on demand
     * @throws IllegalArgumentException if {@code client} is null, or {@code path} is null, empty,
     *     relative, ends with or contains {@code //}, or has characters ZooKeeper rejects
     */
    public ZkMutex(ZkClient client, String path) {
        super(new LockEngine(client, path, NodeKind.LOCK));
        engine.bind(this, null);
    }
}
