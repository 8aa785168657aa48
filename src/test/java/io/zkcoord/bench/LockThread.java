package io.zkcoord.bench;

import io.zkcoord.lock.ZkLock;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;

/**
 * A thread that takes one lock with {@code lock()}, reports itself to a queue once it holds it,
 * and keeps it until {@link #release()}. Used by the herd table to line waiters up behind a holder.
 */
final class LockThread extends Thread {

    private static final long STACK_BYTES = 256 * 1024;

    private final ZkLock lock;
    private final BlockingQueue<LockThread> acquired;
    private final CountDownLatch permit = new CountDownLatch(1);
    private volatile Throwable failure;

    LockThread(String name, ZkLock lock, BlockingQueue<LockThread> acquired) {
        super(null, null, name, STACK_BYTES);
        this.lock = lock;
        this.acquired = acquired;
        setDaemon(true);
    }

    @Override
    public void run() {
        try {
            lock.lock();
            try {
                acquired.add(this);
                permit.await();
            } finally {
                lock.unlock();
            }
        } catch (Throwable e) {
            failure = e;
        }
    }

    /** Lets the thread unlock once it holds the lock (at once if it already does). */
    void release() {
        permit.countDown();
    }

    Throwable failure() {
        return failure;
    }
}
