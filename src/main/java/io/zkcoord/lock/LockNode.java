package io.zkcoord.lock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The name of one node in a lock directory, parsed: {@code <kind>-<attemptId>-<sequence>}, e.g.
 * {@code write-5f0c...e1-0000000042}.
 *
 * <p>The attempt id is random per acquisition attempt, so a client can find its own node again
 * after a create whose reply was lost, and no other attempt (another thread, another lock object on
 * the same session) can ever take it for its own. Nodes order by {@link #sequence()} only: never by
 * the whole name, whose attempt id would scramble the queue.
 *
 * @param name the node name, without the directory
 * @param kind what the node waits for
 * @param attemptId the random id of the attempt that created it
 * @param sequence the number ZooKeeper appended
 */
record LockNode(String name, NodeKind kind, String attemptId, long sequence) {

    /** Queue order: by sequence number only. */
    static final Comparator<LockNode> QUEUE_ORDER = Comparator.comparingLong(LockNode::sequence);

    /** ZooKeeper appends the parent's counter as ten digits. */
    private static final int SEQUENCE_DIGITS = 10;

    /** @return the name a create with {@code EPHEMERAL_SEQUENTIAL} gets before its sequence */
    static String prefix(NodeKind kind, String attemptId) {
        return kind.prefix() + "-" + attemptId + "-";
    }

    /** @return the parsed node, or empty if {@code name} is not a lock node */
    static Optional<LockNode> parse(String name) {
        int first = name.indexOf('-');
        int last = name.lastIndexOf('-');
        if (first <= 0 || last <= first + 1 || name.length() - last - 1 != SEQUENCE_DIGITS) {
            return Optional.empty();
        }
        NodeKind kind = NodeKind.ofPrefix(name.substring(0, first));
        String digits = name.substring(last + 1);
        if (kind == null || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return Optional.of(new LockNode(name, kind, name.substring(first + 1, last), Long.parseLong(digits)));
    }

    /** @return the lock nodes among {@code children}, in queue order; other names are left out */
    static List<LockNode> queue(List<String> children) {
        List<LockNode> nodes = new ArrayList<>(children.size());
        for (String child : children) {
            parse(child).ifPresent(nodes::add);
        }
        nodes.sort(QUEUE_ORDER);
        return nodes;
    }
}
