package io.zkcoord.once;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The writer of one value node for one client: runs its operations one at a time, each applied
 * exactly once (see {@link OnceRule}), and remembers between them the node's state and this
 * session's marker, so that an uncontended write costs one request.
 *
 * <p>Thread-safe. Operations run in the order they were submitted; their steps run on
 * ZooKeeper's event thread and the client's scheduler, never blocking.
 */
public final class OnceWriter {

    private final ClientServices services;
    private final String path;
    private final long id = ThreadLocalRandom.current().nextLong();

    // Guarded by this.
    private final ArrayDeque<OnceOperation<?>> queue = new ArrayDeque<>();
    private boolean running;
    private long operations;

    // Touched only by the running operation (one at a time; hand-over through this object's lock).
    private ZkSession markerSession;
    private OnceRule.Marker marker;
    private NodeState cached;

    OnceWriter(ClientServices services, String path) {
        this.services = services;
        this.path = path;
    }

    /**
     * Runs {@code change} once, after the operations submitted before it.
     *
     * @param change the operation's rule
     * @param <R> what it returns
     * @return completed, on ZooKeeper's event thread or the scheduler's, with the result of the
     *     one attempt that was applied (or of the answer without a write); or exceptionally with
     *     {@link io.zkcoord.CommitOutcomeUnknownException} if the session ended (or the retry
     *     policy gave up) with an attempt unanswered, {@link io.zkcoord.CoordinationException}
     *     if the retry policy gave up with nothing applied or the ensemble refused for good,
     *     {@link IllegalStateException} if the client closed, or whatever {@code change} threw
     */
    public <R> CompletableFuture<Outcome<R>> submit(Change<R> change) {
        CompletableFuture<Outcome<R>> result = new CompletableFuture<>();
        OnceOperation<R> op;
        boolean start;
        synchronized (this) {
            op = new OnceOperation<>(this, ++operations, change, result);
            queue.add(op);
            start = !running;
            running = true;
        }
        if (start) {
            next();
        }
        return result;
    }

    /** Starts the next operation, if any. */
    private void next() {
        OnceOperation<?> op;
        synchronized (this) {
            op = queue.poll();
            if (op == null) {
                running = false;
                return;
            }
        }
        op.start();
    }

    /** Called by an operation when it has completed its future: the next one may run. */
    void finished() {
        next();
    }

    ClientServices services() {
        return services;
    }

    String path() {
        return path;
    }

    long id() {
        return id;
    }

    // The state kept between operations. Only the running operation calls these.

    /** @return what is known of {@code session}'s marker, or null if nothing (read it first) */
    OnceRule.Marker marker(ZkSession session) {
        if (session != markerSession) {
            // A session this writer has not written in yet: nobody else makes its marker.
            markerSession = session;
            marker = OnceRule.Marker.ABSENT;
        }
        return marker;
    }

    void marker(ZkSession session, OnceRule.Marker known) {
        markerSession = session;
        marker = known;
    }

    NodeState cached() {
        return cached;
    }

    void cached(NodeState state) {
        cached = state;
    }
}
