package io.zkcoord.session;

import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes raw ZooKeeper handles without making anyone wait: {@link ZooKeeper#close()} is
 * synchronous and, while the network is silent, waits for its close-session request until the
 * connection attempt in progress gives up (up to the session timeout).
 *
 * <p>Stateless and thread-safe.
 */
final class HandleCloser {

    private static final Logger log = LoggerFactory.getLogger(HandleCloser.class);
    /** How long a handle's own threads are waited for once it stops (ZooKeeper's own wait). */
    static final int HANDLE_CLOSE_MILLIS = 5_000;

    private HandleCloser() {
    }

    /**
     * Closes {@code zk} on a daemon thread of its own. With {@code goodbye}, ZooKeeper's client
     * first asks the ensemble to close the session (so its ephemeral nodes go at once), which waits
     * for a connection or for the attempt in progress to fail; without, the request is skipped and
     * only the handle's threads and socket are stopped, at once.
     *
     * @param zk the handle
     * @param goodbye whether to ask the ensemble to close the session first
     * @param threadName the closing thread's name
     * @return completes once the handle is closed (or its close failed, which is logged at debug)
     */
    static CompletableFuture<Void> closeInBackground(ZooKeeper zk, boolean goodbye, String threadName) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                if (!goodbye) {
                    // ZooKeeper's close() waits for its close-session request interruptibly and,
                    // when interrupted, stops the handle at once without waiting for an answer.
                    Thread.currentThread().interrupt();
                }
                zk.close(HANDLE_CLOSE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable e) {
                log.debug("{}: closing a handle failed", threadName, e);
            } finally {
                done.complete(null);
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
        return done;
    }
}
