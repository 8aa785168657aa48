package io.zkcoord.once;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Several operations queued on one writer, planned one after another on the state each leaves and
 * sent as one write: the pure rule of combining. With it, a client whose threads add to one
 * counter at once lands all their additions in one round trip instead of one round trip each.
 *
 * <p>Applied as one attempt, the operations take effect in queue order at one instant (the
 * attempt's commit), each seeing the node as the ones before it in the queue left it; every
 * operation was waiting throughout, so that instant lies within each call: each result is the one
 * it would have had alone at that point. The answers without a write ({@link Plan.Done}) in the
 * middle of the queue hold because the combined write is guarded by the version the whole queue
 * was planned on (it is unguarded only when every operation is an unguarded write, whose answers
 * depend on nothing read). When no operation writes, the combined plan answers without a write,
 * and the operation takes that only on a state read during it (as for one change).
 *
 * <p>Only for changes that decide on the node's existence and data, never on its version: the
 * states between two changes of the queue never exist on the server, and are given the version
 * the queue was planned on. Changes with extra operations ({@link Plan.Write#extra()}) are not
 * combined: such a plan fails the operation.
 *
 * <p>A change that throws (data it cannot decode) fails only its own operation: its result is a
 * {@link Failed}, taken like a {@link Plan.Done} on the state it saw (so the write is guarded, and
 * a queue that does not write answers only on a state read during it), and the changes after it
 * see the node as it was. So a {@code set} queued with a read of a corrupt node still repairs it,
 * as it would alone.
 *
 * <p>Immutable; tested without a server.
 */
final class Combined implements Change<List<Object>> {

    private final List<Change<?>> changes;

    /**
     * @param changes the operations, in queue order; at least one
     * @throws IllegalArgumentException if there are none
     */
    Combined(List<? extends Change<?>> changes) {
        if (changes.isEmpty()) {
            throw new IllegalArgumentException("nothing to combine");
        }
        this.changes = List.copyOf(changes);
    }

    @Override
    public Plan<List<Object>> plan(NodeState current) {
        NodeState state = current;
        List<Object> results = new ArrayList<>(changes.size());
        byte[] written = null;
        boolean guarded = false;
        for (Change<?> change : changes) {
            Plan<?> plan;
            try {
                plan = change.plan(state);
            } catch (RuntimeException e) {
                // This operation fails alone, as it would have alone on this state: an answer
                // taken on a state read, like a Done; the ones after it see the node unchanged.
                guarded = true;
                results.add(new Failed(e));
                continue;
            }
            if (plan instanceof Plan.Write<?> write) {
                if (!write.extra().isEmpty()) {
                    throw new IllegalStateException("a change with extra operations cannot be combined: " + change);
                }
                written = write.data();
                guarded |= write.guarded();
                state = new NodeState(true, written, state.version(), state.czxid(), state.mzxid());
                results.add(write.result());
            } else {
                guarded = true; // an answer taken on a state read: only if that state is still the node's
                results.add(((Plan.Done<?>) plan).result());
            }
        }
        List<Object> answers = Collections.unmodifiableList(results);
        return written == null ? Plan.done(answers) : new Plan.Write<>(written, guarded, List.of(), answers);
    }

    /**
     * The result of an operation whose change threw on the state it was planned on: it fails with
     * {@code cause}, alone.
     *
     * @param cause what the change threw
     */
    record Failed(RuntimeException cause) {
    }

    @Override
    public String toString() {
        return "Combined[" + changes.size() + " changes]";
    }
}
