package io.zkcoord.queue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The name of one node in a queue directory, parsed: {@code <kind>-<attemptId>-<sequence>}, e.g.
 * {@code write-5f0c...e1-0000000042}. Every recipe names its nodes this way; the kind (lower-case
 * letters: {@code lock}, {@code read}, {@code write}, ...) says what the node waits for, and each
 * recipe's rule reads it.
 *
 * <p>The attempt id is random per acquisition attempt, so a client can find its own node again
 * after a create whose reply was lost, and no other attempt (another thread, another lock object on
 * the same session) can ever take it for its own. Nodes order by {@link #sequence()} only: never by
 * the whole name, whose kind and attempt id would scramble the queue.
 *
 * @param name the node name, without the directory
 * @param kind the recipe's kind, the name's first part
 * @param attemptId the random id of the attempt that created it
 * @param sequence the number ZooKeeper appended
 */
public record QueueNode(String name, String kind, String attemptId, long sequence) {

    /** Queue order: by sequence number only. */
    public static final Comparator<QueueNode> QUEUE_ORDER = Comparator.comparingLong(QueueNode::sequence);

    /** ZooKeeper appends the parent's counter as ten digits. */
    private static final int SEQUENCE_DIGITS = 10;

    /**
     * @return the name a create with {@code EPHEMERAL_SEQUENTIAL} gets before its sequence
     * @throws IllegalArgumentException if {@code kind} is not lower-case letters
     */
    public static String prefix(String kind, String attemptId) {
        if (!isKind(kind)) {
            throw new IllegalArgumentException("a node kind is lower-case letters, was " + kind);
        }
        return kind + "-" + attemptId + "-";
    }

    /** @return the parsed node, or empty if {@code name} is not a queue node */
    public static Optional<QueueNode> parse(String name) {
        int first = name.indexOf('-');
        int last = name.lastIndexOf('-');
        if (first <= 0 || last <= first + 1 || name.length() - last - 1 != SEQUENCE_DIGITS) {
            return Optional.empty();
        }
        String kind = name.substring(0, first);
        String digits = name.substring(last + 1);
        if (!isKind(kind) || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return Optional.of(new QueueNode(name, kind, name.substring(first + 1, last), Long.parseLong(digits)));
    }

    /** @return the queue nodes among {@code children}, in queue order; other names are left out */
    public static List<QueueNode> queue(List<String> children) {
        List<QueueNode> nodes = new ArrayList<>(children.size());
        for (String child : children) {
            parse(child).ifPresent(nodes::add);
        }
        nodes.sort(QUEUE_ORDER);
        return nodes;
    }

    private static boolean isKind(String kind) {
        return kind != null && !kind.isEmpty() && kind.chars().allMatch(c -> c >= 'a' && c <= 'z');
    }
}
