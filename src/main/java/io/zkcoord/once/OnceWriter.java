package io.zkcoord.once;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The writer of one value node for one client: runs its operations one at a time, each applied
 * exactly once (see {@link OnceRule}), and remembers between them the node's state and this
 * session's marker, so that an uncontended write costs one request.
 *
 * <p>Operations submitted with {@link #submitCombinable} that are queued behind a running one are
 * combined when their turn comes: planned one after another and sent as one write (see {@link
 * Combined}), so that a client's threads adding to one counter at once share a round trip.
 *
 * <p>Thread-safe. Operations run in the order they were submitted; their steps run on
 * ZooKeeper's event thread and the client's scheduler, never blocking.
 */
public final class OnceWriter {

    /** At most this many operations share one write (their planning runs on ZooKeeper's event thread). */
    static final int MAX_COMBINED = 256;

    private final ClientServices services;
    private final String path;
    private final long id = ThreadLocalRandom.current().nextLong();

    // Guarded by this.
    private final ArrayDeque<Pending<?>> queue = new ArrayDeque<>();
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
        return enqueue(change, false);
    }

    /**
     * As {@link #submit}, and the operation may share one write with the combinable operations
     * queued next to it (see {@link Combined}): for changes that decide on the node's existence and
     * data only, never its version, and write no extra operations.
     *
     * @param change the operation's rule
     * @param <R> what it returns
     * @return as {@link #submit}; a failure of the shared write fails every operation in it (a
     *     change that throws fails only its own operation)
     */
    public <R> CompletableFuture<Outcome<R>> submitCombinable(Change<R> change) {
        return enqueue(change, true);
    }

    private <R> CompletableFuture<Outcome<R>> enqueue(Change<R> change, boolean combinable) {
        CompletableFuture<Outcome<R>> result = new CompletableFuture<>();
        boolean start;
        synchronized (this) {
            queue.add(new Pending<>(change, result, combinable));
            start = !running;
            running = true;
        }
        if (start) {
            next();
        }
        return result;
    }

    /** Starts the next operation, if any: the next queued one, with the combinable ones behind it if it is one. */
    private void next() {
        List<Pending<?>> batch = new ArrayList<>();
        long number;
        synchronized (this) {
            Pending<?> first = queue.poll();
            if (first == null) {
                running = false;
                return;
            }
            batch.add(first);
            while (first.combinable() && batch.size() < MAX_COMBINED && queue.peek() != null && queue.peek().combinable()) {
                batch.add(queue.poll());
            }
            number = ++operations;
        }
        if (batch.size() == 1) {
            startAlone(batch.get(0), number);
            return;
        }
        List<Change<?>> changes = new ArrayList<>(batch.size());
        batch.forEach(p -> changes.add(p.change()));
        CompletableFuture<Outcome<List<Object>>> shared = new CompletableFuture<>();
        shared.whenComplete((outcome, failure) -> {
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).deliver(outcome, i, failure);
            }
        });
        new OnceOperation<>(this, number, new Combined(changes), shared).start();
    }

    private <R> void startAlone(Pending<R> pending, long number) {
        new OnceOperation<>(this, number, pending.change(), pending.result()).start();
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

    /** An operation waiting for its turn. */
    private record Pending<R>(Change<R> change, CompletableFuture<Outcome<R>> result, boolean combinable) {

        /** Completes this operation from the outcome of the write it shared, where it was the {@code index}th. */
        @SuppressWarnings("unchecked")
        void deliver(Outcome<List<Object>> shared, int index, Throwable failure) {
            if (failure != null) {
                result.completeExceptionally(failure);
            } else if (shared.result().get(index) instanceof Combined.Failed failed) {
                result.completeExceptionally(failed.cause());
            } else {
                result.complete(new Outcome<>((R) shared.result().get(index), shared.after()));
            }
        }
    }
}
