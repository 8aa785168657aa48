package io.zkcoord.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.Lock;
import java.util.function.Consumer;

/**
 * A daemon thread that takes one lock with {@code lock()}, reports once it holds it, and keeps it until
 * {@link #release()}; then it unlocks and ends. Lines waiters up behind a holder (the herd tests and the
 * herd table). What it failed with (in {@code lock()}, {@code unlock()}, or interrupted while holding) is
 * kept for {@link #failure()}.
 */
public final class HoldingThread extends Thread {

    private static final long STACK_BYTES = 256 * 1024;

    private final Lock lock;
    private final Consumer<? super HoldingThread> onHold;
    private final CountDownLatch permit = new CountDownLatch(1);
    private volatile Throwable failure;

    /** @param onHold told, on this thread, once it holds the lock */
    public HoldingThread(String name, Lock lock, Consumer<? super HoldingThread> onHold) {
        super(null, null, name, STACK_BYTES);
        this.lock = lock;
        this.onHold = onHold;
        setDaemon(true);
    }

    @Override
    public void run() {
        try {
            lock.lock();
            try {
                onHold.accept(this);
                permit.await();
            } finally {
                lock.unlock();
            }
        } catch (Throwable e) {
            failure = e;
        }
    }

    /** Lets the thread unlock once it holds the lock (at once if it already does). */
    public void release() {
        permit.countDown();
    }

    /** @return what the thread failed with, or null */
    public Throwable failure() {
        return failure;
    }
}
