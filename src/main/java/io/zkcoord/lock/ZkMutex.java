package io.zkcoord.lock;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.queue.CuratorNames;
import io.zkcoord.queue.QueueNaming;

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
        this(client, path, Protocol.ZKCOORD);
    }

    /**
     * A mutex that names, orders and watches its nodes by {@code protocol}. With {@link
     * Protocol#CURATOR} it shares {@code path} with Apache Curator's {@code InterProcessMutex} (and
     * {@code LeaderSelector}) as one fair FIFO queue: nodes {@code _c_<uuid>-lock-<sequence>} whose
     * data is this host's IP address, as Curator's default. The contract of {@link ZkLock} holds for
     * this side (tokens, leases, guarded commits, time limits, one watch per waiter) either way.
     *
     * @param client the client whose session holds the lock
     * @param path the lock directory, e.g. {@code /locks/orders}; created on demand
     * @param protocol {@link Protocol#ZKCOORD} (as {@link #ZkMutex(ZkClient, String)}), or {@link
     *     Protocol#CURATOR} while Curator processes use the path
     * @throws IllegalArgumentException if {@code client} or {@code protocol} is null, or {@code
     *     path} is as {@link #ZkMutex(ZkClient, String)} refuses
     */
    public ZkMutex(ZkClient client, String path, Protocol protocol) {
        super(new LockEngine(client, path, NodeKind.LOCK, QueueNaming.of(protocol, CuratorNames.MUTEX)));
        engine.bind(this, null);
    }
}
