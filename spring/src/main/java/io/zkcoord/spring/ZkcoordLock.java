package io.zkcoord.spring;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkLease;
import io.zkcoord.internal.Reachability;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.time.Instant;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.TaskScheduler;

/**
 * The lock a {@link ZkcoordLockRegistry} hands out for one key: a {@link ZkMutex} on the key's path
 * (fair, FIFO across threads and processes, a fencing token per hold), held by a thread, reentrant,
 * with an optional time to live.
 *
 * <pre>{@code
 * ZkcoordLock lock = registry.obtain("orders/42");
 * if (lock.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(30))) {   // wait 5 s, hold 30 s at most
 *     try {
 *         orders.write(order, lock.fencingToken());   // the store refuses tokens lower than the last
 *     } finally {
 *         lock.unlock();   // ConcurrentModificationException if the 30 s ran out first
 *     }
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Holds belong to threads.</b> Each thread's hold is a {@link ZkLease} of the key's mutex,
 *       so two threads of one JVM queue in ZooKeeper exactly as two processes do, in arrival order.
 *       The holding thread may acquire again with no ZooKeeper call and must unlock as often.
 *   <li><b>{@code lock()}</b> blocks until held and is not interruptible (an interrupt is kept and
 *       set again on return). {@code lockInterruptibly()} ends with {@link InterruptedException}
 *       and deletes its queue node. {@code tryLock()} takes one look (at most 780 ms; see below
 *       for a thread whose hold ended), never
 *       waits for a holder and never throws for an interrupt. {@code tryLock(time, unit)} waits at most about that long whatever the
 *       network does. If the client is closed they throw {@link IllegalStateException}.
 *   <li><b>While ZooKeeper is unreachable.</b> An acquisition that needs ZooKeeper (not a
 *       reentrant one) while the client is not connected waits for a connection at most the
 *       client's {@linkplain io.zkcoord.ZkClient#connectionTimeout() connection timeout}, then
 *       throws {@link CoordinationException} whose one-line message says ZooKeeper is unreachable;
 *       once one acquisition of the registry has waited that long in vain, the others of the same
 *       outage throw at once, so a thread that polls {@code tryLock()} is not held for the
 *       client's retry policy. A timed {@code tryLock} shorter than the connection timeout returns
 *       false when its time runs out first. One WARN line per outage, one INFO line when it ends.
 *       A connection lost during an acquisition already under way is ridden out under the client's
 *       retry policy ({@link CoordinationException} if it gives up).
 *   <li><b>Time to live.</b> {@link #lock(Duration)} and {@link #tryLock(Duration, Duration)} hold
 *       for at most {@code ttl} unless renewed ({@link ZkcoordLockRegistry#renewLock(Object,
 *       Duration)}, or the registry's renewal scheduler). When it passes, the hold ends by itself
 *       whatever its thread does (stuck in a deadlock or a loop): its node is deleted, the next
 *       waiter gets the lock, and the {@link HoldLossListener}s run. The ttl is kept by this JVM's
 *       scheduler; if the JVM dies, its session ends the hold. The plain {@link java.util.concurrent.locks.Lock}
 *       methods hold with no time to live: only the session bounds them. A reentrant acquisition
 *       with a ttl gives the hold that ttl from now; without one it leaves the hold's ttl alone.
 *   <li><b>{@code unlock()}</b> by a thread that does not hold the lock throws {@link
 *       IllegalStateException}. After the hold ended by itself (ttl, or the session ended) every
 *       {@code unlock()} still owed by the nesting throws {@link ConcurrentModificationException},
 *       and the last one clears the thread's hold. The last release
 *       deletes the node (waiting about a second at most; it goes on in the background while the
 *       ensemble cannot be reached).
 *   <li><b>Acquiring after an ended hold</b> (as Spring's Redis and JDBC registries do). A thread
 *       whose hold ended and who has not yet called {@code unlock()} as often as it acquired may
 *       acquire again: the acquisition is a new one, not a reentrant one. It first waits until the
 *       ended hold's node is deleted (the ttl's release, about a second at most; {@code tryLock()}
 *       waits for it 1.5 s at most and then says false), then asks
 *       ZooKeeper as any thread would: {@code tryLock()} returns false while another holds the
 *       lock, and takes it if it is free; {@code lock()}, {@code lockInterruptibly()} and the timed
 *       {@code tryLock}s wait as always. A new hold has a new node, so its fencing token is higher
 *       than the ended one's (and than any holder's in between). The ended hold stays under the new
 *       one: the new hold's {@code unlock()}s release it as usual, and after them each {@code
 *       unlock()} the ended hold still owes throws {@link ConcurrentModificationException} as
 *       before. An acquisition that gives up (false, interrupt, error) changes nothing: the ended
 *       hold stays the thread's, and its next {@code unlock()} throws.
 *   <li><b>Session loss.</b> Every hold of the lost session ends (cause {@link
 *       HoldLossListener.Cause#SESSION_ENDED}); threads still waiting queue again in the new session.
 *   <li>{@link #newCondition()} throws {@link UnsupportedOperationException}.
 * </ul>
 *
 * <h2>Fencing</h2>
 * {@link #fencingToken()} is the {@code czxid} of the current thread's node: it strictly increases
 * from each holder to the next. Pass it with every write to the guarded resource.
 *
 * <p>Thread-safe.
 */
public final class ZkcoordLock implements DistributedLock {

    private static final Logger log = LoggerFactory.getLogger(ZkcoordLock.class);
    private static final long FOREVER = Long.MAX_VALUE;
    /** How long {@code tryLock()} waits for its thread's expired hold's node to go before its one look. */
    private static final long ONE_LOOK_GRACE_MILLIS = 1_500;

    private final ZkcoordLockRegistry registry;
    private final String key;
    private final ZkMutex mutex;
    private final List<HoldLossListener> lossListeners = new CopyOnWriteArrayList<>();

    /** The holds of threads that have not yet unlocked for the last time, ended ones included. */
    private final Map<Thread, ThreadHold> holds = new HashMap<>();
    /** Threads between asking ZooKeeper and being granted or refused. Guarded by this. */
    private int waiting;
    /** When this lock was last asked for or released (monotonic nanos). Guarded by this. */
    private long lastUsedNanos = System.nanoTime();

    ZkcoordLock(ZkcoordLockRegistry registry, String key, String path) {
        this.registry = registry;
        this.key = key;
        this.mutex = new ZkMutex(registry.client(), path, registry.protocol());
    }

    /** Blocks until held, with no time to live; not interruptible (see the class contract). */
    @Override
    public void lock() {
        acquireUninterruptibly(null);
    }

    /**
     * Blocks until held, holding for at most {@code ttl} unless renewed; not interruptible.
     *
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative
     */
    @Override
    public void lock(Duration ttl) {
        acquireUninterruptibly(checkTtl(ttl));
    }

    /** Blocks until held or interrupted, with no time to live. */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(FOREVER, null, true);
    }

    /**
     * One look, no wait for a holder, no time to live. Never throws for an interrupt, as {@link
     * java.util.concurrent.locks.Lock#tryLock()} promises: an interrupt set before the call is kept
     * and the look is taken; one that arrives during the look makes it return false (no node is
     * left) with the interrupt status set.
     */
    @Override
    public boolean tryLock() {
        boolean interrupted = Thread.interrupted();
        try {
            return acquire(0, null, false);
        } catch (InterruptedException e) {
            interrupted = true;
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits at most about {@code time} (zero or less: one look), with no time to live; interruptible. */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (unit == null) {
            throw new IllegalArgumentException("unit must not be null");
        }
        return acquire(Math.max(0, unit.toNanos(time)), null, true);
    }

    /**
     * Waits at most about {@code waitTime} (zero or less: one look), then holds for at most {@code
     * ttl} unless renewed; interruptible.
     *
     * @return true if held, false if the wait ran out (no node is left)
     * @throws IllegalArgumentException if {@code waitTime} is null, or {@code ttl} is null, zero or negative
     * @throws InterruptedException if interrupted while waiting (status cleared); no node is left
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        if (waitTime == null) {
            throw new IllegalArgumentException("waitTime must not be null");
        }
        return acquire(nanos(waitTime), checkTtl(ttl), true);
    }

    /**
     * Releases one acquisition of the current thread; the last one deletes the node.
     *
     * @throws IllegalStateException if the current thread does not hold this lock
     * @throws ConcurrentModificationException if the hold ended by itself (its time to live ran out,
     *     or its session ended) before this call; it counts as one release of the nesting, and the
     *     last one clears the thread's hold
     */
    @Override
    public void unlock() {
        Thread me = Thread.currentThread();
        ThreadHold hold;
        synchronized (this) {
            hold = holds.get(me);
            if (hold == null) {
                throw new IllegalStateException(me.getName() + " does not hold " + this);
            }
            if (hold.ended == null && !hold.lease.isValid()) {
                hold.ended = HoldLossListener.Cause.SESSION_ENDED;
            }
            if (hold.ended != null) {
                // Each unlock of the nesting counts, so the outermost one (in its finally block) throws
                // this exception too, and never releases a later hold of the same thread.
                if (--hold.count <= 0) {
                    pop(me, hold);
                    hold.cancelTimers();
                    lastUsedNanos = System.nanoTime();
                }
                throw new ConcurrentModificationException("the hold of " + this + " by " + me.getName()
                        + " (fencing token " + hold.lease.fencingToken() + ") had already ended: " + describe(hold.ended));
            }
            if (--hold.count > 0) {
                return;
            }
            pop(me, hold);
            hold.released = true;
            hold.cancelTimers();
            lastUsedNanos = System.nanoTime();
        }
        hold.lease.release();
    }

    /** @throws UnsupportedOperationException always: ZooKeeper locks have no conditions */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions are not supported by " + this);
    }

    /**
     * The fencing token of the current thread's hold: the {@code czxid} of its lock node. It stays
     * readable after the hold ended, until {@code unlock()}, so that a late write carries its old
     * token and is refused by the resource.
     *
     * @throws IllegalStateException if the current thread does not hold this lock
     */
    public long fencingToken() {
        synchronized (this) {
            ThreadHold hold = holds.get(Thread.currentThread());
            if (hold == null) {
                throw new IllegalStateException(Thread.currentThread().getName() + " does not hold " + this);
            }
            return hold.lease.fencingToken();
        }
    }

    /** @return true if the current thread holds this lock and its hold has not ended */
    public boolean isHeldByCurrentThread() {
        synchronized (this) {
            ThreadHold hold = holds.get(Thread.currentThread());
            return hold != null && hold.live() && hold.lease.isValid();
        }
    }

    /** @return true if some thread of this JVM holds this lock (a hold not yet ended) */
    public boolean isLocked() {
        synchronized (this) {
            return holds.values().stream().anyMatch(ThreadHold::live);
        }
    }

    /** @return the key's znode path (the mutex's directory) */
    public String path() {
        return mutex.path();
    }

    /** @return the key as given to {@link ZkcoordLockRegistry#obtain(Object)}, as a string */
    public String key() {
        return key;
    }

    /**
     * Adds a listener told, once per hold, when a hold of this lock ends without its thread's
     * {@code unlock()}.
     *
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addLossListener(HoldLossListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        lossListeners.add(listener);
    }

    @Override
    public String toString() {
        return "ZkcoordLock[" + key + " at " + mutex.path() + "]";
    }

    /** Renews the current thread's hold: {@code ttl}, or its own ttl when null. */
    void renew(Duration ttl) {
        synchronized (this) {
            ThreadHold hold = holds.get(Thread.currentThread());
            if (hold == null || !hold.live() || !hold.lease.isValid()) {
                throw new IllegalStateException(Thread.currentThread().getName() + " does not hold " + this
                        + (hold == null ? "" : ": its hold ended"));
            }
            if (ttl != null) {
                hold.ttl = ttl;
                scheduleTimers(hold);
            } else if (hold.ttl != null) {
                scheduleExpiry(hold);
            }
        }
    }

    /** @return true if no thread holds (or held without unlocking) this lock or waits for it, and it was last used before {@code nanos} */
    synchronized boolean unusedSince(long nanos) {
        return holds.isEmpty() && waiting == 0 && lastUsedNanos - nanos < 0;
    }

    /** @return how many threads of this JVM are asking ZooKeeper for this lock */
    synchronized int waitingThreads() {
        return waiting;
    }

    private void acquireUninterruptibly(Duration ttl) {
        try {
            acquire(-1, ttl, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("an uninterruptible acquisition was interrupted", e);
        }
    }

    /**
     * The one acquisition path.
     *
     * @param waitNanos how long to wait; 0 for one look, {@link #FOREVER} for as long as it takes
     *     (interruptibly), -1 for as long as it takes, not interruptibly
     */
    private boolean acquire(long waitNanos, Duration ttl, boolean interruptible) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        Thread me = Thread.currentThread();
        long start = System.nanoTime();
        if (registry.keep(this, () -> enter(me, ttl))) {
            return true;
        }
        try {
            if (!reachable(waitNanos, interruptible || waitNanos == 0)) {
                return false;
            }
            ThreadHold ended;
            synchronized (this) {
                ended = holds.get(me);
            }
            if (ended != null && !awaitGone(ended, waitNanos, interruptible)) {
                return false;
            }
            long left = waitNanos <= 0 || waitNanos == FOREVER ? waitNanos
                    : Math.max(0, waitNanos - (System.nanoTime() - start));
            Optional<ZkLease> lease = waitForLease(left);
            if (lease.isEmpty()) {
                return false;
            }
            granted(me, lease.get(), ttl);
            return true;
        } finally {
            synchronized (this) {
                waiting--;
                lastUsedNanos = System.nanoTime();
            }
        }
    }

    /**
     * Counts a reentrant acquisition (true), or counts the thread as waiting (false). Runs while the
     * registry keeps this object, so that expireUnusedOlderThan cannot drop it from now on.
     */
    private synchronized boolean enter(Thread me, Duration ttl) {
        lastUsedNanos = System.nanoTime();
        ThreadHold hold = holds.get(me);
        if (hold != null && hold.live() && hold.lease.isValid()) {
            hold.count++;
            if (ttl != null) {
                hold.ttl = ttl;
                scheduleTimers(hold);
            }
            return true;
        }
        waiting++;
        return false;
    }

    private Optional<ZkLease> waitForLease(long waitNanos) throws InterruptedException {
        if (waitNanos == -1) {
            return Optional.of(joinUninterruptibly(mutex.acquireAsync()));
        }
        if (waitNanos == FOREVER) {
            return Optional.of(mutex.acquire());
        }
        return mutex.tryAcquire(Duration.ofNanos(waitNanos));
    }

    /** Waits for the future, keeping (and then restoring) any interrupt instead of giving up. */
    private static ZkLease joinUninterruptibly(CompletableFuture<ZkLease> future) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | CompletionException | CancellationException e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new CoordinationException("acquisition failed: " + cause, cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void granted(Thread me, ZkLease lease, Duration ttl) {
        ThreadHold hold = new ThreadHold(me, lease, ttl);
        synchronized (this) {
            ThreadHold ended = holds.put(me, hold);
            if (ended != null) {
                ended.under(hold);
            }
            scheduleTimers(hold);
        }
        lease.whenLost().thenRun(() -> end(hold, HoldLossListener.Cause.SESSION_ENDED, -1));
    }

    /** (Re)starts the hold's expiry and, with a renewal scheduler, its renewal task. Caller holds the monitor. */
    private void scheduleTimers(ThreadHold hold) {
        hold.cancelTimers();
        if (hold.ttl == null) {
            return;
        }
        scheduleExpiry(hold);
        TaskScheduler renewer = registry.renewalScheduler();
        if (renewer != null) {
            Duration period = hold.ttl.dividedBy(3).isZero() ? Duration.ofMillis(1) : hold.ttl.dividedBy(3);
            hold.renewal = renewer.scheduleAtFixedRate(() -> renewFromScheduler(hold), Instant.now().plus(period), period);
        }
    }

    /** Caller holds the monitor. */
    private void scheduleExpiry(ThreadHold hold) {
        if (hold.expiry != null) {
            hold.expiry.cancel(false);
        }
        long round = ++hold.expiryRound;
        hold.expiry = registry.timers().schedule(() -> end(hold, HoldLossListener.Cause.TTL_EXPIRED, round),
                nanos(hold.ttl), TimeUnit.NANOSECONDS);
    }

    private void renewFromScheduler(ThreadHold hold) {
        synchronized (this) {
            if (hold.live() && hold.ttl != null) {
                scheduleExpiry(hold);
            }
        }
    }

    /**
     * Ends a hold that its owner did not release: deletes its node (ttl) and tells the listeners.
     * A ttl timer passes the round it was scheduled in: if a renewal scheduled a later expiry since
     * (the timer fired while the renewal held the monitor, too late to be cancelled), the hold stays.
     *
     * @param expiryRound the timer's round, or -1 for an end that no renewal can overtake
     */
    private void end(ThreadHold hold, HoldLossListener.Cause cause, long expiryRound) {
        synchronized (this) {
            if (!hold.live() || (expiryRound >= 0 && expiryRound != hold.expiryRound)) {
                return;
            }
            hold.ended = cause;
            hold.cancelTimers();
        }
        if (cause != HoldLossListener.Cause.TTL_EXPIRED) {
            hold.gone.complete(null);
        }
        registry.endings().execute(() -> {
            if (cause == HoldLossListener.Cause.TTL_EXPIRED) {
                log.warn("{}: the hold of {} (fencing token {}) passed its time to live; releasing it",
                        this, hold.owner.getName(), hold.lease.fencingToken());
                try {
                    hold.lease.release();
                } finally {
                    hold.gone.complete(null);
                }
            }
            for (HoldLossListener listener : lossListeners) {
                try {
                    listener.holdLost(this, hold.owner, hold.lease.fencingToken(), cause);
                } catch (RuntimeException e) {
                    log.warn("{}: a loss listener threw", this, e);
                }
            }
        });
    }

    /**
     * While the client is not connected: waits for a connection, at most the client's connection
     * timeout (a timed wait shorter than that: at most the wait), and not at all once a caller has
     * waited the connection timeout in vain in the same outage.
     *
     * @return true if connected; false if a timed wait shorter than the connection timeout ran out
     * @throws CoordinationException (one line: ZooKeeper unreachable) if not connected within the
     *     connection timeout, or at once later in the same outage
     * @throws InterruptedException if interrupted while waiting, and {@code interruptible}
     */
    private boolean reachable(long waitNanos, boolean interruptible) throws InterruptedException {
        Reachability reachability = registry.reachability();
        Duration connectionTimeout = registry.client().connectionTimeout();
        if (waitNanos > 0 && waitNanos != FOREVER && waitNanos < nanos(connectionTimeout)) {
            if (reachability.awaitConnected(Duration.ofNanos(waitNanos), interruptible)) {
                return true;
            }
            if (!reachability.waitedOut()) {
                return false;
            }
        }
        Optional<String> down = reachability.unreachable(interruptible);
        if (down.isPresent()) {
            throw new CoordinationException(down.get() + "; " + this + " not locked");
        }
        return true;
    }

    /** The thread's hold is done: the ended hold it was granted over, if any, is its hold again. Caller holds the monitor. */
    private void pop(Thread me, ThreadHold hold) {
        if (hold.below != null) {
            holds.put(me, hold.below);
            hold.below = null;
        } else {
            holds.remove(me);
        }
    }

    /**
     * Before a thread whose hold ended (not yet unlocked as often as acquired) asks for the lock
     * again: waits until that hold's node is deleted, so that it does not stand in its own way. A
     * hold whose session ended has no node to wait for; a ttl's release is bounded (about a
     * second, see {@link ZkLease#release()}).
     *
     * @return false if the wait ({@code waitNanos} &gt; 0, or the look of {@code waitNanos} 0,
     *     given 1.5 s) ran out first
     */
    private static boolean awaitGone(ThreadHold ended, long waitNanos, boolean interruptible) throws InterruptedException {
        if (ended.ended != HoldLossListener.Cause.TTL_EXPIRED || ended.gone.isDone()) {
            return true;
        }
        long limit = waitNanos == 0 ? TimeUnit.MILLISECONDS.toNanos(ONE_LOOK_GRACE_MILLIS) : waitNanos;
        boolean forever = limit < 0 || limit == FOREVER;
        long deadline = System.nanoTime() + (forever ? 0 : limit);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (forever) {
                        ended.gone.get();
                    } else {
                        ended.gone.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    }
                    return true;
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    return false;
                } catch (ExecutionException e) {
                    return true;   // never completed exceptionally; nothing to wait for
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String describe(HoldLossListener.Cause cause) {
        return cause == HoldLossListener.Cause.TTL_EXPIRED ? "its time to live ran out" : "its ZooKeeper session ended";
    }

    private static Duration checkTtl(Duration ttl) {
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        return ttl;
    }

    /** @return the duration in nanoseconds, capped (a duration too long to count so is about forever) */
    private static long nanos(Duration d) {
        try {
            return Math.max(0, d.toNanos());
        } catch (ArithmeticException e) {
            return d.isNegative() ? 0 : Long.MAX_VALUE / 2;
        }
    }
}
