package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;

/**
 * What one {@link Acquisition} watches (step 5 of its protocol): the node its rule named ({@code
 * getData} with a watch: none is left if the node is already gone), or its queue's children; and
 * the children watch that a read pipelined behind a create making the directory set, which a lone
 * grant keeps ({@link LoneHolds}). At most one of each at a time, each through the session's one
 * watcher of its path ({@link SharedWatches}).
 *
 * <p>Stopping sends nothing: the session's watcher stays with ZooKeeper's client until the node
 * changes, shared with whoever else waits on it, and the next wait on the node passes the same
 * watcher ({@link SharedWatches}: why no {@code removeWatches}).
 *
 * <p>Not thread-safe: one acquisition owns it and uses it under its own monitor only. Events and
 * replies go to the acquisition, which knows whether they still belong to its current step.
 */
final class Watching {

    private final QueueSessions sessions;
    /** Our interest in the watch we wait for (a node, or the queue); null when not watching. */
    private SharedWatches.Subscription watching;
    /** The children watch that a read pipelined behind a create making the directory set, for a lone hold; or null. */
    private LoneHolds.Watch loneWatch;

    /** The reply to the {@code getData} that watches a node. */
    interface NodeReply {
        /**
         * @param promoted true if the node's data was set since its creation: it announced its
         *     promotion already
         */
        void answered(Code code, boolean promoted);
    }

    Watching(QueueSessions sessions) {
        this.sessions = sessions;
    }

    /**
     * Watches node {@code path}: {@code getData} with the session's watcher of it, whose event goes
     * to {@code fired}, and whose reply goes to {@code reply}.
     *
     * @throws RuntimeException if the client refused the request (nothing was sent)
     */
    void node(ZkSession session, String path, Consumer<WatchedEvent> fired, NodeReply reply) {
        SharedWatches.Subscription sub = sessions.of(session).watches().watch(SharedWatches.Kind.DATA, path, fired);
        watching = sub;
        try {
            session.zooKeeper().getData(path, sub.watcher(), (rc, p, ctx, bytes, stat) -> {
                sub.answered(Code.get(rc));
                reply.answered(Code.get(rc), stat != null && stat.getVersion() > 0);
            }, null);
        } catch (RuntimeException e) {
            sub.answered(Code.SYSTEMERROR); // nothing was sent
            throw e;
        }
    }

    /**
     * Subscribes to the session's watcher of directory {@code dir}'s children, whose event goes to
     * {@code fired}: pass it with the read that sets it, or report {@link
     * SharedWatches.Subscription#answered} if that read cannot be sent.
     */
    SharedWatches.Subscription queue(ZkSession session, String dir, Consumer<WatchedEvent> fired) {
        SharedWatches.Subscription sub = sessions.of(session).watches().watch(SharedWatches.Kind.CHILDREN, dir, fired);
        watching = sub;
        return sub;
    }

    /** The watch waited for fired: a watch fires once, and told us it left. */
    void fired() {
        watching = null;
    }

    /**
     * @return a new children watch of {@code dir} for a read pipelined behind the create that makes
     *     it, in place of any earlier one, kept if that read grants alone ({@link #takeLone})
     */
    LoneHolds.Watch lone(ZkSession session, String dir) {
        dropLone();
        loneWatch = sessions.of(session).loneHolds().watch(dir);
        return loneWatch;
    }

    /** @return the lone hold's watch, which a grant hands on (or cancels); null if none */
    LoneHolds.Watch takeLone() {
        LoneHolds.Watch lone = loneWatch;
        loneWatch = null;
        return lone;
    }

    /** Stops waiting for any watch; sends nothing. */
    void drop() {
        if (watching != null) {
            watching.cancel();
            watching = null;
        }
        dropLone();
    }

    private void dropLone() {
        if (loneWatch != null) {
            loneWatch.cancel();
            loneWatch = null;
        }
    }
}
