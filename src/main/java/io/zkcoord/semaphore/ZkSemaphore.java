package io.zkcoord.semaphore;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.Holder;
import io.zkcoord.observe.Recipe;
import io.zkcoord.queue.Leases;
import io.zkcoord.queue.QueueDirectory;
import io.zkcoord.queue.QueueLease;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.Waits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.ZooDefs;

/**
 * A fair counting semaphore shared by every process that uses the same path on the same ZooKeeper
 * ensemble: at most {@link #permits()} valid leases at once, granted in arrival order.
 *
 * <pre>{@code
 * ZkSemaphore exports = new ZkSemaphore(client, "/semaphores/exports", 3);
 * try (ZkLease lease = exports.acquire()) {       // one of at most 3 at once
 *     runExport(lease.fencingToken());
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>At most N, FIFO.</b> Each acquisition queues an {@code EPHEMERAL_SEQUENTIAL} node; the
 *       first N nodes of the queue hold. A later arrival never takes a permit while an earlier
 *       waiter is still in the queue, even when it would fit (two waiters that qualify at once may
 *       learn it in either order).
 *   <li><b>The permit count is part of the semaphore.</b> The first acquisition records it as the
 *       data of the directory node ({@code permits=N}). A {@code ZkSemaphore} built with another
 *       count for the same path fails its acquisitions with {@link IllegalStateException} naming
 *       both counts; the node it queued is deleted before it may hold. The count is checked
 *       whenever an acquisition finds a directory other than the one last checked. The directory is a {@code CONTAINER} node: once it has been
 *       empty for a while the server removes it, and with it the recorded count.
 *   <li><b>Leases free themselves.</b> A holder that dies (process killed, session expired) frees
 *       its permit with its session; its lease reports the loss ({@link ZkLease#whenLost()}
 *       completes, {@link ZkLease#isValid()} turns false).
 *   <li><b>No node is left</b> by any way of not getting a lease: timeout, interrupt, cancelled
 *       future, connection loss during the create (the lost reply is recovered), closed client.
 *   <li><b>Time limits</b> hold whatever the network does, as for the locks: {@code
 *       tryAcquire(time)} returns within its time + 200 ms, {@code tryAcquire(ZERO)} takes one look
 *       (at most 780 ms), an interrupt is answered at once.
 *   <li><b>Herd-free.</b> One release, or one holder's crash, notifies two sessions at most: the
 *       waiter that takes the permit and the one that becomes first in line. See {@code
 *       SemaphoreRule}.
 *   <li><b>The first waiter relays.</b> Only the first waiter hears of releases; the waiters
 *       behind it learn from it. If the first waiter's process is frozen (a long GC pause) or its
 *       network is silent, releases wait for it: free permits stay unused until it wakes or its
 *       session ends (at most the session timeout), never more than N are in use.
 *   <li>The client's node ACL must grant WRITE (the default ACLs do): a holder rewrites its own
 *       node once to wake the next in line. The constructor refuses an ACL without it.
 * </ul>
 * Leases are the same {@link ZkLease} type as the locks': fencing token = the {@code czxid} of the
 * lease's node, idempotent {@code release()} from any thread.
 *
 * <p>Thread-safe. Several {@code ZkSemaphore} objects for one path, in one process or many, share
 * its permits.
 */
public final class ZkSemaphore {

    private static final String KIND = "sem";
    private static final String PERMITS_KEY = "permits=";

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final int permits;
    private final QueueDirectory queue;
    private final Leases leases;

    /**
     * @param client the client whose session holds the leases
     * @param path the semaphore's directory, e.g. {@code /semaphores/exports}; created on demand
     * @param permits how many leases may be valid at once, at least 1
     * @throws IllegalArgumentException if {@code client} is null, {@code permits < 1}, or {@code path}
     *     is null, empty, relative, ends with or contains {@code //}, or has characters ZooKeeper
     *     rejects, or the ACL the client gives this semaphore's queue nodes (its one ACL, or its
     *     aclProvider's answer) grants no WRITE
     */
    public ZkSemaphore(ZkClient client, String path, int permits) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        this.path = QueuePaths.validate("semaphore", path);
        // A holder that comes to hold with waiters behind it rewrites its node's data once to wake
        // the next in line: without WRITE on its own nodes that wake-up would be lost. Asked with
        // the shape of a queue node's path (an attempt id of zeros), as its create will ask.
        java.util.List<org.apache.zookeeper.data.ACL> nodeAcl =
                client.aclFor(path + "/" + io.zkcoord.queue.QueueNode.prefix(KIND, "0".repeat(32)));
        if (nodeAcl.stream().noneMatch(a -> (a.getPerms() & ZooDefs.Perms.WRITE) != 0)) {
            throw new IllegalArgumentException("ZkSemaphore needs WRITE in the ACL of its queue nodes, which grants "
                    + nodeAcl);
        }
        this.client = client;
        this.services = ClientServices.of(client);
        this.permits = permits;
        this.queue = new QueueDirectory(client, path, record(permits), new CountGuard());
        this.leases = new Leases(new Host(), KIND, new SemaphoreRule(permits), this::checkOpen);
    }

    /**
     * Acquires a lease, blocking until one of the permits is free for this caller (FIFO).
     *
     * @return the lease; release it (any thread) when done
     * @throws InterruptedException if interrupted while waiting (status cleared); no node is left
     * @throws IllegalStateException if the client is closed (also while waiting), or the path's
     *     recorded permit count differs from {@link #permits()}
     * @throws io.zkcoord.CoordinationException if ZooKeeper cannot be reached within the client's
     *     retry policy; no node is left
     */
    public ZkLease acquire() throws InterruptedException {
        return leases.acquire(Waits.FOREVER).orElseThrow();
    }

    /**
     * Acquires a lease, waiting at most {@code maxWait}, ZooKeeper calls included. {@link
     * Duration#ZERO} (or less) takes one look and never waits for a holder to leave.
     *
     * @param maxWait how long to wait at most
     * @return the lease, or empty if none was granted in time (no node is left)
     * @throws IllegalArgumentException if {@code maxWait} is null
     * @throws InterruptedException if interrupted while waiting (status cleared); no node is left
     * @throws IllegalStateException as {@link #acquire()}
     * @throws io.zkcoord.CoordinationException as {@link #acquire()}
     */
    public Optional<ZkLease> tryAcquire(Duration maxWait) throws InterruptedException {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        long nanos;
        try {
            nanos = maxWait.toNanos();
        } catch (ArithmeticException e) {
            nanos = maxWait.isNegative() ? 0 : Waits.FOREVER;
        }
        return leases.acquire(nanos);
    }

    /**
     * Starts acquiring a lease and returns at once; no thread waits. The future completes with the
     * lease, or exceptionally with {@link IllegalStateException} (client closed, permit count
     * mismatch) or {@link io.zkcoord.CoordinationException}. Dependent actions run on a library
     * thread, never ZooKeeper's. Cancelling the future, or completing it by any other means (such
     * as {@code orTimeout}), abandons the acquisition and deletes its node; a lease granted at that
     * instant is released.
     *
     * @return the future of the lease
     */
    public CompletableFuture<ZkLease> acquireAsync() {
        return leases.acquireAsync();
    }

    /** @return how many leases may be valid at once */
    public int permits() {
        return permits;
    }

    /** @return the semaphore's directory, as given */
    public String path() {
        return path;
    }

    @Override
    public String toString() {
        return "ZkSemaphore[" + path + ", permits=" + permits + "]";
    }

    // ------------------------------------------------------------------ the permit count

    private static byte[] record(int permits) {
        return (PERMITS_KEY + permits).getBytes(StandardCharsets.UTF_8);
    }

    /** Acquisitions need an open client; the permit count is checked by {@link CountGuard}. */
    private CompletableFuture<Void> checkOpen() {
        return client.isClosed()
                ? CompletableFuture.failedFuture(new IllegalStateException("cannot acquire " + describe() + ": "
                        + client + " is closed"))
                : CompletableFuture.completedFuture(null);
    }

    /**
     * The permit count recorded in the directory must be ours. Checked by every acquisition whose
     * read of the queue shows a directory other than the one last checked (by its {@code czxid}):
     * the first acquisition of this object, and any after the directory was removed and made again
     * (perhaps by another process with another count). A mismatch fails the acquisition with {@link
     * IllegalStateException} before its node may hold; the node is deleted.
     */
    private final class CountGuard implements QueueDirectory.DirectoryGuard {
        private volatile long validated;

        @Override
        public long validatedCzxid() {
            return validated;
        }

        @Override
        public CompletableFuture<Void> validate(io.zkcoord.ZkSession session) {
            return queue.directoryData(session).thenCompose(data -> {
                if (data == null) {
                    return CompletableFuture.failedFuture(new io.zkcoord.CoordinationException("the directory of "
                            + describe() + " vanished while queueing"));
                }
                String text = new String(data.bytes(), StandardCharsets.UTF_8);
                if (text.equals(PERMITS_KEY + permits)) {
                    validated = data.czxid();
                    return CompletableFuture.completedFuture(null);
                }
                return CompletableFuture.failedFuture(new IllegalStateException(text.startsWith(PERMITS_KEY)
                        ? "semaphore " + path + " has " + text.substring(PERMITS_KEY.length()) + " permits, recorded in"
                                + " ZooKeeper; this ZkSemaphore was built with " + permits
                        : "semaphore " + path + " records no permit count (its directory holds '" + text + "'); this"
                                + " ZkSemaphore was built with " + permits + ": is the path used by another recipe? (Curator's"
                                + " InterProcessSemaphoreV2 and InterProcessSemaphoreMutex keep 'leases' and 'locks' under"
                                + " their path, and do not share a path with ZkSemaphore)"));
            });
        }
    }

    private String describe() {
        return "semaphore " + path + " (" + permits + " permits)";
    }

    /** What the queue core's leases need of this semaphore. */
    private final class Host implements QueueLease.Host {
        @Override
        public String describe() {
            return ZkSemaphore.this.describe();
        }

        @Override
        public io.zkcoord.queue.QueueSet queue() {
            return queue.alone();
        }

        @Override
        public void reportLoss(long fencingToken, Runnable andThen) {
            services.userCallbacks().execute(andThen);
        }

        @Override
        public CoordinationEvent observedAs(Holder holder) {
            return CoordinationEvent.of(Recipe.SEMAPHORE, path, holder);
        }
    }
}
