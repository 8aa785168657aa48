package io.zkcoord.queue;

import java.util.Optional;
import java.util.UUID;

/**
 * Apache Curator's node names, as facts about its wire format (no Curator code): every recipe node
 * is {@code EPHEMERAL_SEQUENTIAL}, made in Curator's "protected" mode, and named {@code
 * _c_<36-character UUID>-<lockName><10-digit sequence>}. The lock names:
 * <ul>
 *   <li>{@code lock-}: {@code InterProcessMutex}, and {@code LeaderSelector} (a mutex); our kind {@code lock};
 *   <li>{@code __WRIT__} and {@code __READ__}: {@code InterProcessReadWriteLock}'s two sides (no dash
 *       before the sequence); our kinds {@code write} and {@code read};
 *   <li>{@code latch-}: {@code LeaderLatch}; our election's kind {@code leader}.
 * </ul>
 * Any other lock name parses too, as the kind {@value #UNKNOWN_KIND}: every rule counts it as an
 * exclusive contender, so a Curator node is never ignored.
 *
 * <p>A read lock Curator takes while its thread holds the write lock (a downgrade) is a plain
 * {@code EPHEMERAL} node named as a read node with the write node's sequence: two nodes may then
 * carry one sequence, and a write node's deletion does not end the exclusion it stood for.
 *
 * <p>Curator orders a directory by a text key per child: the text after the last occurrence of the
 * recipe's lock name, or the whole name when absent ({@link #sortKey}); strings compare as text.
 */
public final class CuratorNames {

    /** Curator's mark of a "protected" node name. */
    public static final String PROTECTED = "_c_";
    /** The lock name of {@code InterProcessMutex} and {@code LeaderSelector}. */
    public static final String MUTEX = "lock-";
    /** The lock name of {@code InterProcessReadWriteLock}'s write side. */
    public static final String WRITE = "__WRIT__";
    /** The lock name of {@code InterProcessReadWriteLock}'s read side. */
    public static final String READ = "__READ__";
    /** The lock name of {@code LeaderLatch}. */
    public static final String LATCH = "latch-";
    /** Our kind for a Curator node of a lock name we do not know. */
    public static final String UNKNOWN_KIND = "curator";

    /** {@code _c_} + UUID + {@code -}. */
    private static final int PREFIX_LENGTH = PROTECTED.length() + 36 + 1;
    private static final int SEQUENCE_DIGITS = 10;
    private static final String[][] KINDS = {
        {MUTEX, "lock"}, {WRITE, "write"}, {READ, "read"}, {LATCH, "leader"},
    };

    private CuratorNames() {
    }

    /** @return Curator's lock name for our {@code kind}, e.g. {@code lock-} for {@code lock} */
    public static String lockNameOf(String kind) {
        for (String[] k : KINDS) {
            if (k[1].equals(kind)) {
                return k[0];
            }
        }
        throw new IllegalArgumentException("no Curator node name for kind " + kind);
    }

    /** @return our kind for Curator's {@code lockName}: a known one, or {@value #UNKNOWN_KIND} */
    static String kindOf(String lockName) {
        for (String[] k : KINDS) {
            if (k[0].equals(lockName)) {
                return k[1];
            }
        }
        return UNKNOWN_KIND;
    }

    /**
     * @param kind our kind, mapped to its Curator lock name
     * @param attemptId a UUID, as Curator's protected id
     * @return the name a create with {@code EPHEMERAL_SEQUENTIAL} gets before its sequence
     */
    public static String prefix(String kind, UUID attemptId) {
        return PROTECTED + attemptId + "-" + lockNameOf(kind);
    }

    /** @return {@code name} parsed, if it is a Curator-form node name */
    static Optional<QueueNode> parse(String name) {
        int seqAt = name.length() - SEQUENCE_DIGITS;
        if (seqAt <= PREFIX_LENGTH || !name.startsWith(PROTECTED) || name.charAt(PREFIX_LENGTH - 1) != '-') {
            return Optional.empty();
        }
        String uuid = name.substring(PROTECTED.length(), PREFIX_LENGTH - 1);
        if (!isUuid(uuid)) {
            return Optional.empty();
        }
        long sequence = 0;
        for (int i = seqAt; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return Optional.empty();
            }
            sequence = sequence * 10 + (c - '0');
        }
        String lockName = name.substring(PREFIX_LENGTH, seqAt);
        return Optional.of(new QueueNode(name, kindOf(lockName), uuid, sequence));
    }

    /**
     * Curator's sort key of one child for a recipe whose lock names are {@code lockNames}, applied in
     * turn as its read/write lock applies both of its own: the text after the last occurrence of a
     * lock name, or the name unchanged when it holds none.
     */
    public static String sortKey(String name, java.util.List<String> lockNames) {
        String key = name;
        for (String lockName : lockNames) {
            int at = key.lastIndexOf(lockName);
            if (at >= 0) {
                key = key.substring(at + lockName.length());
            }
        }
        return key;
    }

    /** @return true if {@code s} has a UUID's shape: 8-4-4-4-12 hexadecimal digits */
    private static boolean isUuid(String s) {
        if (s.length() != 36) {
            return false;
        }
        for (int i = 0; i < 36; i++) {
            char c = s.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                return false;
            }
        }
        return true;
    }
}
