package io.zkcoord.queue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The name of one node in a queue directory, parsed: {@code <kind>-<attemptId>-<sequence>}, e.g.
 * {@code write-5f0c...e1-0000000042}. Every recipe names its nodes this way; the kind (lower-case
 * letters: {@code lock}, {@code read}, {@code write}, ...) says what the node waits for, and each
 * recipe's rule reads it. Apache Curator's names ({@code _c_<uuid>-lock-0000000042}, see {@link
 * CuratorNames}) parse too, to the kind of ours that does the same ({@code lock}, {@code write},
 * {@code read}, {@code leader}), with the UUID as attempt id: under either {@link
 * io.zkcoord.Protocol} a recipe counts them.
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

    /**
     * Queue order: by sequence number, then (only for two nodes with one sequence: a Curator
     * downgrade's read node beside its write node) by name, so that every reader agrees.
     */
    public static final Comparator<QueueNode> QUEUE_ORDER = Comparator.comparingLong(QueueNode::sequence)
            .thenComparing(QueueNode::name);

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

    /** @return the parsed node (either form), or empty if {@code name} is not a queue node */
    public static Optional<QueueNode> parse(String name) {
        if (name.startsWith(CuratorNames.PROTECTED)) {
            return CuratorNames.parse(name);
        }
        int first = name.indexOf('-');
        int last = name.lastIndexOf('-');
        if (first <= 0 || last <= first + 1 || name.length() - last - 1 != SEQUENCE_DIGITS) {
            return Optional.empty();
        }
        // Plain loops over the name rather than streams: every reply of an acquisition parses its
        // queue on ZooKeeper's event thread, where this is on the path to the caller's wake-up.
        if (!lowerCaseLetters(name, 0, first)) {
            return Optional.empty();
        }
        long sequence = 0;
        for (int i = last + 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return Optional.empty();
            }
            sequence = sequence * 10 + (c - '0');
        }
        return Optional.of(new QueueNode(name, name.substring(0, first), name.substring(first + 1, last), sequence));
    }

    /** @return true if Apache Curator's form names this node ({@code _c_<uuid>-<lockName><sequence>}) */
    public boolean curatorForm() {
        return name.startsWith(CuratorNames.PROTECTED);
    }

    /**
     * @return the queue nodes among {@code children}, of both forms, in {@link #QUEUE_ORDER}; other
     *     names are left out
     */
    public static List<QueueNode> queue(List<String> children) {
        List<QueueNode> nodes = new ArrayList<>(children.size());
        for (String child : children) {
            parse(child).ifPresent(nodes::add);
        }
        nodes.sort(QUEUE_ORDER);
        return nodes;
    }

    private static boolean isKind(String kind) {
        return kind != null && !kind.isEmpty() && lowerCaseLetters(kind, 0, kind.length());
    }

    /** @return true if {@code s[from, to)} is only the letters a to z */
    private static boolean lowerCaseLetters(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < 'a' || c > 'z') {
                return false;
            }
        }
        return true;
    }
}
