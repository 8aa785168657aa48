package io.zkcoord.barrier;

import java.util.List;
import java.util.Optional;

/**
 * The double barrier's rule, without a server: from the members' node names, what a member does
 * next. Entering: pass once {@code members} nodes are there (the one who sees it makes the ready
 * node; the others wait for it). Leaving, as in ZooKeeper's recipe: the lowest member leaves last
 * and waits for the highest; every other member deletes its node and waits for the lowest; so
 * that the last departure (the lowest's) is the one event all waiters hear. Stateless.
 */
final class DoubleBarrierRule {

    /** The name prefix of a member's node. */
    static final String MEMBER_PREFIX = "member-";
    /** The node made once every member has entered. */
    static final String READY = "ready";

    private DoubleBarrierRule() {
    }

    /** @return the members' nodes among a barrier's children, sorted */
    static List<String> members(List<String> children) {
        return children.stream().filter(c -> c.startsWith(MEMBER_PREFIX)).sorted().toList();
    }

    /** @return whether the members present fill the barrier */
    static boolean full(List<String> members, int size) {
        return members.size() >= size;
    }

    /**
     * A leaving member's next step.
     *
     * @param delete whether to delete its own node now (and, if last, the ready node)
     * @param waitFor the member node to wait for the deletion of; empty: it may pass
     */
    record LeaveStep(boolean delete, Optional<String> waitFor) {
    }

    /**
     * @param members the members' nodes, sorted
     * @param mine this member's node name
     * @return its next step
     */
    static LeaveStep leave(List<String> members, String mine) {
        boolean present = members.contains(mine);
        if (members.isEmpty() || (present && members.size() == 1)) {
            return new LeaveStep(present, Optional.empty());
        }
        if (!present && members.isEmpty()) {
            return new LeaveStep(false, Optional.empty());
        }
        String lowest = members.get(0);
        if (present && mine.equals(lowest)) {
            return new LeaveStep(false, Optional.of(members.get(members.size() - 1)));
        }
        return new LeaveStep(present, Optional.of(lowest));
    }
}
