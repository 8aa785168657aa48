package io.zkcoord.curator;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * One exclusive lock of either library behind the same few calls, so that a scenario can be run
 * with either library as the holder and the other as the contender. Thread-safe as the lock it
 * wraps.
 */
interface Contender {

    /** Which library a scenario's first party uses; the second party uses the other one. */
    enum Library {
        CURATOR, ZKCOORD;

        Library other() {
            return this == CURATOR ? ZKCOORD : CURATOR;
        }

        /** @return a lock of this library on {@code path}, in a session of its own in {@code fleet} */
        Contender mutex(Fleet fleet, String path) throws Exception {
            return this == CURATOR ? curator(new InterProcessMutex(fleet.curator(), path))
                    : zkcoord(new ZkMutex(fleet.zkcoord(), path, Protocol.CURATOR));
        }
    }

    /** Blocks until held. */
    void lock() throws Exception;

    /** Blocks until held, or throws {@link InterruptedException} if the thread is interrupted. */
    void lockInterruptibly() throws Exception;

    /** @return true if held within {@code wait}; false, with no node of this call left, if not */
    boolean tryFor(Duration wait) throws Exception;

    /** Releases one hold of the current thread. */
    void unlock() throws Exception;

    /** @return whether the current thread holds it */
    boolean heldByCurrentThread();

    /** @return the library's name, for messages */
    String library();

    static Contender curator(InterProcessMutex m) {
        return new Contender() {
            @Override
            public void lock() throws Exception {
                m.acquire();
            }

            @Override
            public void lockInterruptibly() throws Exception {
                m.acquire(); // Curator's acquire is interruptible
            }

            @Override
            public boolean tryFor(Duration wait) throws Exception {
                return m.acquire(wait.toMillis(), TimeUnit.MILLISECONDS);
            }

            @Override
            public void unlock() throws Exception {
                m.release();
            }

            @Override
            public boolean heldByCurrentThread() {
                return m.isOwnedByCurrentThread();
            }

            @Override
            public String library() {
                return "Curator";
            }
        };
    }

    static Contender zkcoord(ZkLock m) {
        return new Contender() {
            @Override
            public void lock() {
                m.lock();
            }

            @Override
            public void lockInterruptibly() throws InterruptedException {
                m.lockInterruptibly();
            }

            @Override
            public boolean tryFor(Duration wait) throws InterruptedException {
                return m.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
            }

            @Override
            public void unlock() {
                m.unlock();
            }

            @Override
            public boolean heldByCurrentThread() {
                return m.isHeldByCurrentThread();
            }

            @Override
            public String library() {
                return "zkcoord";
            }
        };
    }

    /** @return a zkcoord mutex with Protocol.CURATOR on {@code path} of {@code client} */
    static Contender zkcoord(ZkClient client, String path) {
        return zkcoord(new ZkMutex(client, path, Protocol.CURATOR));
    }

    /** @return a Curator mutex on {@code path} of {@code client} */
    static Contender curator(CuratorFramework client, String path) {
        return curator(new InterProcessMutex(client, path));
    }
}
