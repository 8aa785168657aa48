package io.zkcoord.lock;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import org.apache.zookeeper.KeeperException;

/** The queue of one lock directory as the server has it, read by a client that takes no part in the test. */
final class LockQueue {

    private LockQueue() {
    }

    /**
     * @return the names of the nodes under {@code dir} now, in the server's order; empty if {@code dir}
     *         does not exist
     * @throws AssertionError if they cannot be read
     */
    static List<String> children(ZkClient observer, String dir) {
        try {
            return observer.zooKeeper().getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new AssertionError("cannot read the children of " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** @return the lock nodes under {@code dir} now, in queue order; empty if {@code dir} does not exist */
    static List<QueueNode> of(ZkClient observer, String dir) {
        return QueueNode.queue(children(observer, dir));
    }

    /** Waits until {@code dir} holds {@code n} lock nodes (a failed read counts as not yet). */
    static void awaitSize(ZkClient observer, String dir, int n, Duration within) {
        Await.until(within, () -> {
            try {
                return of(observer, dir).size() == n;
            } catch (AssertionError e) {
                return false;
            }
        }, () -> n + " nodes in " + dir);
    }
}
