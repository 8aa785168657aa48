package io.zkcoord;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * A granted hold that belongs to an object, not to a thread: what {@code acquire()}, {@code
 * tryAcquire(Duration)} and {@code acquireAsync()} of every zkcoord recipe return.
 *
 * <pre>{@code
 * try (ZkLease lease = mutex.acquire()) {
 *     lease.whenLost().thenRun(worker::stop);     // the session ended: stop touching the resource
 *     resource.write(data, lease.fencingToken());  // the resource refuses stale tokens
 * }                                                // release()
 * }</pre>
 *
 * <ul>
 *   <li>Any thread may release it; it is not reentrant. A lease and a thread's hold of the same
 *       lock exclude each other exactly as two processes do.
 *   <li>It ends when released, or when its ZooKeeper session ends (expired, presumed expired
 *       during a partition, or the client closed): then {@link #isValid()} turns false and {@link
 *       #whenLost()} completes. From that moment another process may hold what it guarded.
 *   <li>Its {@link #fencingToken()} is the {@code czxid} of its node: tokens strictly increase from
 *       each holder of a lock to the next. Pass it with every write to the guarded resource.
 * </ul>
 *
 * <p>Implementations are thread-safe.
 */
public interface ZkLease extends AutoCloseable {

    /** @return the {@code czxid} of the lease's node; readable after release or loss too */
    long fencingToken();

    /** @return the full path of the lease's node */
    String nodePath();

    /** @return true until the lease is released or lost */
    boolean isValid();

    /**
     * @return completes (with null) when the lease is lost with its session; never if it was
     *     released first. Dependent actions run on a library thread, never ZooKeeper's; what they
     *     throw does not reach the library.
     */
    CompletableFuture<Void> whenLost();

    /**
     * Applies {@code ops} only if this lease still holds, checked by the server: the operations go
     * in one {@code multi} behind a {@code check} that the lease's node exists, on the lease's own
     * session. If the session expired (a GC pause, a partition), the node is gone and nothing is
     * applied, whatever this process believes. Blocks until the ensemble answers (not interruptible;
     * an interrupt stays set).
     *
     * <p>A holder resumed after a pause longer than its session timeout usually gets {@link
     * CommitOutcomeUnknownException}, not {@link LockLostException}: its client drops the stale
     * connection with the write still queued. The write was not applied (the session had expired),
     * but the client cannot know; re-read before deciding ({@code PausedHolderFaultTest}: 120 of 120
     * such writes refused, each reported as outcome unknown).
     *
     * <pre>{@code
     * lease.commitIfHeld(List.of(Op.setData("/stock", newLevel, expectedVersion)));
     * }</pre>
     *
     * @param ops the operations ({@code create}, {@code delete}, {@code setData}, {@code check}); none
     *     is a server-side check of the hold
     * @return the results of {@code ops}, in order (not the check's)
     * @throws LockLostException if the lease's node is gone, or the lease was released or known lost;
     *     nothing applied
     * @throws CoordinationException whose cause is the {@link org.apache.zookeeper.KeeperException}
     *     (with its per-operation results) if one of {@code ops} failed; nothing applied
     * @throws CommitOutcomeUnknownException if the connection dropped before the reply: the write
     *     may or may not have been applied; it is not retried
     * @throws IllegalArgumentException if {@code ops} or one of its operations is null
     */
    List<OpResult> commitIfHeld(Iterable<Op> ops);

    /**
     * Releases the lease: deletes its node. Idempotent, from any thread; throws nothing checked.
     * {@link #isValid()} is false once it returns. It waits about a second at most for the
     * ensemble's answer; if the ensemble cannot be reached the deletion goes on in the background
     * until the connection returns or the session ends (which deletes the node too). Does nothing
     * after a loss. Keeps the thread's interrupt status.
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
