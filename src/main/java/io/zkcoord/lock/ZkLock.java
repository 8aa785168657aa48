package io.zkcoord.lock;

import io.zkcoord.ZkLease;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * A lock shared by every process that uses the same ZooKeeper ensemble and lock path: {@link
 * ZkMutex}, and each side of a {@link ZkReadWriteLock}. It is taken either by a thread (the {@link
 * Lock} methods: holds belong to threads) or as a {@link ZkLease} (a hold that belongs to an
 * object: {@link #acquire()}, {@link #tryAcquire(Duration)}, {@link #acquireAsync()}).
 *
 * <h2>Contract, beyond {@link Lock}</h2>
 * <ul>
 *   <li><b>Holds belong to threads.</b> Two threads of one JVM exclude each other exactly as two
 *       processes do; a thread that holds the lock may take it again (reentrancy) with no
 *       ZooKeeper call, and must release it as many times.
 *   <li><b>{@code lock()}</b> blocks until held and is not interruptible: an interrupt while waiting
 *       is remembered and the flag set again on return. If ZooKeeper cannot be reached within the
 *       client's retry policy it throws {@link io.zkcoord.CoordinationException} and leaves no node
 *       behind.
 *   <li><b>{@code lockInterruptibly()}</b> is {@code lock()} ended early by an interrupt, with
 *       {@link InterruptedException} (interrupt status cleared); the waiter's node is deleted.
 *   <li><b>{@code tryLock()}</b> takes one look and never waits for another holder or waiter; if
 *       anyone is ahead it deletes its node and returns false. The look is given at most 780 ms
 *       (one round trip when the ensemble answers); then it returns false.
 *   <li><b>{@code tryLock(time, unit)}</b> waits at most about that long, counting the ZooKeeper
 *       calls, whatever the network does (a silent partition included); on timeout it deletes its
 *       node (in the background) and returns false. A time of zero or less means one look, as
 *       {@code tryLock()}. An interrupt ends it with {@link InterruptedException}.
 *   <li><b>{@code unlock()}</b> only by the owning thread, otherwise {@link
 *       IllegalMonitorStateException}. The last reentrant release deletes the node (retried under
 *       the client's policy); the thread no longer holds the lock once it returns or throws. If
 *       the policy gives up it throws {@link io.zkcoord.CoordinationException} and the deletion
 *       goes on in the background until the connection returns or the session ends. After the
 *       hold was lost, or the client closed, it only clears the thread's state and logs a
 *       warning; it does not throw. It never throws {@link InterruptedException}; an interrupt
 *       stays set.
 *   <li><b>Session loss.</b> When the client reports {@link io.zkcoord.ConnectionState#LOST} (or
 *       is closed), every hold of that session is lost: {@link #isHeldByCurrentThread()} turns
 *       false for its thread and every {@link LockLossListener} runs once per hold. A thread
 *       waiting in {@code lock()} or a timed {@code tryLock} queues again in the new session,
 *       losing its place (a timed one only until its deadline). A thread whose hold was lost
 *       still owns it locally until it calls {@code unlock()}; until then every acquire method
 *       throws {@link IllegalMonitorStateException} rather than pretend a nested hold.
 *   <li><b>Closed client.</b> Acquiring throws {@link IllegalStateException}; closing the client
 *       wakes every waiter, which then throws {@link IllegalStateException}.
 *   <li>{@link #newCondition()} throws {@link UnsupportedOperationException}.
 * </ul>
 *
 * <h2>Fencing</h2>
 * A lock cannot stop a holder that was paused (GC, partition) from acting after its hold was lost
 * and given to another. Pass {@link #fencingToken()} with every write to the guarded resource; the
 * resource remembers the highest token it has seen and refuses anything lower. Tokens are the
 * {@code czxid} of the holder's node: they strictly increase from each holder to the next, also
 * after the lock directory was deleted and created again.
 *
 * <p>Implementations are thread-safe.
 */
public interface ZkLock extends Lock {

    /**
     * Acquires a {@link ZkLease}: a hold that belongs to the returned object, not to this thread.
     * Blocks until granted. Queued in arrival order with every other waiter, thread or lease.
     *
     * @return the lease; release it (any thread) when done
     * @throws InterruptedException if interrupted while waiting (status cleared); no node is left
     * @throws io.zkcoord.CoordinationException if ZooKeeper cannot be reached within the client's
     *     retry policy; no node is left
     * @throws IllegalStateException if the client is closed, also while waiting
     */
    ZkLease acquire() throws InterruptedException;

    /**
     * Acquires a {@link ZkLease}, waiting at most {@code maxWait}, ZooKeeper calls included: the
     * limit holds whatever the network does. {@link Duration#ZERO} (or less) takes one look and
     * never waits for another holder; the look itself is given at most 780 ms.
     *
     * @param maxWait how long to wait at most
     * @return the lease, or empty if not granted in time (no node is left)
     * @throws IllegalArgumentException if {@code maxWait} is null
     * @throws InterruptedException if interrupted while waiting (status cleared); no node is left
     * @throws io.zkcoord.CoordinationException as {@link #acquire()}
     * @throws IllegalStateException if the client is closed, also while waiting
     */
    Optional<ZkLease> tryAcquire(Duration maxWait) throws InterruptedException;

    /**
     * Starts acquiring a {@link ZkLease} and returns at once; no thread waits for it. The future
     * completes with the lease, or exceptionally with {@link io.zkcoord.CoordinationException} or
     * {@link IllegalStateException} (client closed). Dependent actions run on a library thread,
     * never ZooKeeper's. Cancelling the future, or completing it by any other means (such as
     * {@code orTimeout}), abandons the acquisition and deletes its node; a lease granted at that
     * instant is released. A session lost while waiting queues the acquisition again in the next.
     *
     * @return the future lease
     */
    CompletableFuture<ZkLease> acquireAsync();

    /**
     * Applies {@code ops} only if the current thread's hold still holds, checked by the server (see
     * {@link ZkLease#commitIfHeld}): one {@code multi} behind a {@code check} of the hold's node, on
     * the hold's own session.
     *
     * @param ops the write operations to apply together
     * @return the results of {@code ops}, in order
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws io.zkcoord.LockLostException if the hold's node is gone or the hold is known lost;
     *     nothing applied
     * @throws io.zkcoord.CoordinationException if one of {@code ops} failed (cause: the
     *     {@link org.apache.zookeeper.KeeperException} with its per-operation results); nothing applied
     * @throws io.zkcoord.CommitOutcomeUnknownException if the connection dropped before the reply
     * @throws IllegalArgumentException if {@code ops} or one of its operations is null
     */
    List<OpResult> commitIfHeld(Iterable<Op> ops);

    /** @return true if the current thread holds this lock and the hold has not been lost */
    boolean isHeldByCurrentThread();

    /**
     * The fencing token of the current thread's hold: the {@code czxid} of its lock node (for a read
     * hold taken by downgrading, of the write node it came from). It stays readable after the hold
     * was lost, until {@link #unlock()}, so that a late write carries its old token and is refused
     * by the resource.
     *
     * @return the fencing token, a positive number
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    long fencingToken();

    /** @return the lock's directory, as given */
    String path();

    /**
     * Adds a listener told, once per hold, when a hold of this lock is lost with its session.
     *
     * @param listener the listener to add
     * @throws IllegalArgumentException if {@code listener} is null
     */
    void addLossListener(LockLossListener listener);
}
