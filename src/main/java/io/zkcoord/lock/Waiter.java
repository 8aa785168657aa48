package io.zkcoord.lock;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * One wait of one thread for one watched node: the watch on that node, and the signal that ends
 * the wait. Each waiting thread has its own, so a release wakes exactly the thread that watched
 * the released node, never the other threads of the JVM.
 *
 * <p>Thread-safe: signalled from ZooKeeper's event thread or a session-end hook, awaited by the
 * waiting thread. The first signal wins.
 */
final class Waiter implements Watcher {

    /** Why a wait ended. */
    enum Wake {
        /** The watched node was deleted. */
        NODE_DELETED,
        /** The watched node changed in another way; look again. */
        NODE_CHANGED,
        /** The session of the waiter's node ended (lost, or the client closed). */
        SESSION_ENDED,
        /** The deadline passed. */
        TIMED_OUT
    }

    private final CountDownLatch signalled = new CountDownLatch(1);
    private final AtomicReference<Wake> wake = new AtomicReference<>();

    @Override
    public void process(WatchedEvent event) {
        switch (event.getType()) {
            case NodeDeleted:
                signal(Wake.NODE_DELETED);
                break;
            case None:
                // Connection state: the client's state machine decides what a disconnection means.
                // The watch itself survives a reconnection to the same session.
                break;
            default:
                signal(Wake.NODE_CHANGED);
                break;
        }
    }

    void signal(Wake why) {
        if (wake.compareAndSet(null, why)) {
            signalled.countDown();
        }
    }

    /**
     * Waits until signalled or the acquisition's deadline passes.
     *
     * @throws InterruptedException if interrupted while waiting, when the acquisition lets it
     */
    Wake await(Acquisition acquisition) throws InterruptedException {
        for (;;) {
            long remaining = acquisition.deadline() - System.nanoTime();
            if (remaining <= 0) {
                signal(Wake.TIMED_OUT);
                return wake.get();
            }
            acquisition.clearIfUninterruptible();
            try {
                if (signalled.await(remaining, TimeUnit.NANOSECONDS)) {
                    return wake.get();
                }
            } catch (InterruptedException e) {
                if (acquisition.interruptible()) {
                    throw e;
                }
                acquisition.absorbed();
            }
        }
    }
}
