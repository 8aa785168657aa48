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

    /** @return how many operations this combines */
    int size() {
        return changes.size();
    }

    @Override
    public Plan<List<Object>> plan(NodeState current) {
        NodeState state = current;
        List<Object> results = new ArrayList<>(changes.size());
        byte[] written = null;
        boolean guarded = false;
        for (Change<?> change : changes) {
            Plan<?> plan = change.plan(state);
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

    @Override
    public String toString() {
        return "Combined[" + changes.size() + " changes]";
    }
}
