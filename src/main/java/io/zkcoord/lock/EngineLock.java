package io.zkcoord.lock;

import io.zkcoord.ZkLease;
import io.zkcoord.queue.Waits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The {@link ZkLock} methods, each a one-line call into a {@link LockEngine}. The public lock
 * classes extend it; the contract is written on {@link ZkLock}.
 */
abstract class EngineLock implements ZkLock {

    final LockEngine engine;

    EngineLock(LockEngine engine) {
        this.engine = engine;
    }

    /** Blocks until held; not interruptible (see {@link ZkLock}). */
    @Override
    public void lock() {
        try {
            engine.acquire(Waits.FOREVER, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("uninterruptible acquisition interrupted", e);
        }
    }

    /** Blocks until held or interrupted (see {@link ZkLock}). */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        engine.acquire(Waits.FOREVER, true);
    }

    /** One look, no wait (see {@link ZkLock}). Keeps the interrupt status. */
    @Override
    public boolean tryLock() {
        try {
            return engine.acquire(0, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("uninterruptible acquisition interrupted", e);
        }
    }

    /** Waits at most about {@code time}; interruptible (see {@link ZkLock}). */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (unit == null) {
            throw new IllegalArgumentException("unit must not be null");
        }
        return engine.acquire(unit.toNanos(time), true);
    }

    @Override
    public ZkLease acquire() throws InterruptedException {
        return engine.leases().acquire(Waits.FOREVER).orElseThrow();
    }

    @Override
    public Optional<ZkLease> tryAcquire(Duration maxWait) throws InterruptedException {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        return engine.leases().acquire(nanos(maxWait));
    }

    @Override
    public CompletableFuture<ZkLease> acquireAsync() {
        return engine.leases().acquireAsync();
    }

    /** @return the duration in nanoseconds; durations too long to count so are forever */
    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? 0 : Waits.FOREVER;
        }
    }

    @Override
    public java.util.List<org.apache.zookeeper.OpResult> commitIfHeld(Iterable<org.apache.zookeeper.Op> ops) {
        return engine.commitIfHeld(ops);
    }

    @Override
    public void unlock() {
        engine.release();
    }

    /** @throws UnsupportedOperationException always: ZooKeeper locks have no conditions */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions are not supported by " + engine.describe());
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return engine.isHeldByCurrentThread();
    }

    @Override
    public long fencingToken() {
        return engine.fencingToken();
    }

    @Override
    public String path() {
        return engine.path();
    }

    @Override
    public void addLossListener(LockLossListener listener) {
        engine.addLossListener(listener);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + engine.describe() + "]";
    }
}
