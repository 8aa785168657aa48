package io.zkcoord.cli;

import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.inspect.QueueSnapshot.Entry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A {@link QueueSnapshot} as a table for people, or as JSON for programs. */
final class SnapshotFormat {

    /** The owner shown for a node whose ACL withholds READ from this client. */
    static final String NOT_AUTHORIZED = "(not authorized)";

    private static final String[] HEADER = {"STATE", "KIND", "FOR", "TOKEN", "SESSION", "HOST", "PID", "THREAD", "NODE"};

    private SnapshotFormat() {
    }

    /** Above this many, the names of children that are not queue nodes are cut short. */
    private static final int NAMES_SHOWN = 20;

    /**
     * One line of summary, then one row per queue node in queue order: holding or waiting, the
     * kind, how long it has held or waited (from the node's creation to the read), its fencing
     * token (decimal, as the API, the environment of {@code run} and the logs give it), its session
     * (hex, as ZooKeeper writes session ids), the owner's host, process and thread, and the node's
     * name. A node whose ACL withholds READ from this client shows {@value #NOT_AUTHORIZED} as its
     * owner and {@code -} for what only its data and stat would tell, and a line after the rows
     * says how many there are. Children that are not queue nodes are named on a line of their own after the rows. A
     * path that does not exist, or that holds only such children (a parent of lock directories),
     * is said to be so in the summary line, with no table.
     */
    static String table(QueueSnapshot s) {
        return table(s, "");
    }

    /**
     * As {@link #table(QueueSnapshot)}, for a client whose connect string names a chroot that does
     * not exist ({@code missingChroot}, empty if it exists or there is none): the summary line
     * says the chroot is missing, so a mistyped chroot is not taken for an idle lock.
     */
    static String table(QueueSnapshot s, String missingChroot) {
        StringBuilder b = new StringBuilder();
        b.append(s.path()).append(": ");
        if (!missingChroot.isEmpty()) {
            b.append("does not exist: the chroot ").append(missingChroot).append(" at the end of the connect string"
                    + " does not exist, so nothing under it does (inspect creates nothing; check the chroot)"
                    + " (read at ").append(s.readAt()).append(")\n");
            return b.toString();
        }
        if (!s.exists()) {
            b.append("does not exist: nothing holds or waits there (an idle lock's directory is deleted, so this is "
                    + "also what an idle lock looks like) (read at ").append(s.readAt()).append(")\n");
            return b.toString();
        }
        List<Entry> others = s.notQueueNodes();
        if (!s.isQueueDirectory()) {
            b.append("not a lock directory: it holds ").append(count(others.size(), "node"))
                    .append(" that ").append(others.size() == 1 ? "is not a queue node" : "are not queue nodes")
                    .append(" (sub-directories such as lock directories, or other data): ").append(names(others))
                    .append(" (read at ").append(s.readAt()).append(")\n");
            return b.toString();
        }
        List<Entry> queue = s.entries().stream().filter(e -> !e.kind().isEmpty()).toList();
        if (queue.isEmpty()) {
            b.append("nobody holds or waits (read at ").append(s.readAt()).append(")\n");
            return b.toString();
        }
        long holding = queue.stream().filter(Entry::holding).count();
        b.append(holding).append(" holding, ").append(queue.size() - holding).append(" waiting (read at ")
                .append(s.readAt()).append(")\n");
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (Entry e : queue) {
            if (!e.ownerReadable()) {
                rows.add(new String[] {e.holding() ? "HOLDING" : "waiting", e.kind(), "-", "-", "-", NOT_AUTHORIZED, "-",
                    "-", e.nodeName()});
                continue;
            }
            rows.add(new String[] {
                e.holding() ? "HOLDING" : "waiting",
                e.kind(),
                Durations.format(Duration.between(e.created(), s.readAt())),
                Long.toString(e.fencingToken()),
                e.sessionId() == 0 ? "-" : "0x" + Long.toHexString(e.sessionId()),
                orDash(e.ownerHost()),
                e.ownerPid() < 0 ? "-" : Long.toString(e.ownerPid()),
                orDash(e.ownerThread()),
                e.nodeName(),
            });
        }
        b.append(Columns.render(rows));
        long unreadable = queue.stream().filter(e -> !e.ownerReadable()).count();
        if (unreadable > 0) {
            b.append(count((int) unreadable, "node")).append(' ').append(unreadable == 1 ? "is" : "are")
                    .append(" not authorized (NOAUTH): ").append(unreadable == 1 ? "its" : "their")
                    .append(" ACL withholds READ from this client's identities, so the owner, fencing token, session"
                            + " and age are unknown; holding or waiting is what the place in the queue says\n");
        }
        if (!others.isEmpty()) {
            b.append("also ").append(count(others.size(), "node")).append(" that ")
                    .append(others.size() == 1 ? "is not a queue node" : "are not queue nodes").append(": ")
                    .append(names(others)).append('\n');
        }
        return b.toString();
    }

    /**
     * The snapshot as one JSON object: {@code path}, {@code readAt}, {@code chrootExists} (true),
     * {@code exists}, {@code
     * lockDirectory} (false for a path that holds only children that are not queue nodes), {@code
     * entries} (the queue nodes in queue order; {@code fencingToken} is a decimal number; a node
     * whose ACL withholds READ from this client has {@code ownerReadable} false and null for every
     * field only its data and stat would give) and
     * {@code notQueueNodes} (the names of the other children).
     */
    static String json(QueueSnapshot s) {
        return json(s, "");
    }

    /**
     * As {@link #json(QueueSnapshot)}, with {@code chrootExists} before {@code exists}: false when
     * the connect string names a chroot that does not exist ({@code missingChroot}, empty if it
     * exists or there is none), true otherwise.
     */
    static String json(QueueSnapshot s, String missingChroot) {
        StringBuilder b = new StringBuilder();
        b.append("{\"path\":").append(string(s.path()))
                .append(",\"readAt\":").append(string(s.readAt().toString()))
                .append(",\"chrootExists\":").append(missingChroot.isEmpty())
                .append(",\"exists\":").append(s.exists())
                .append(",\"lockDirectory\":").append(s.isQueueDirectory())
                .append(",\"notQueueNodes\":[");
        List<Entry> others = s.notQueueNodes();
        for (int i = 0; i < others.size(); i++) {
            b.append(i > 0 ? "," : "").append(string(others.get(i).nodeName()));
        }
        b.append("],\"entries\":[");
        List<Entry> queue = s.entries().stream().filter(e -> !e.kind().isEmpty()).toList();
        for (int i = 0; i < queue.size(); i++) {
            Entry e = queue.get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append("\n  {\"nodeName\":").append(string(e.nodeName()))
                    .append(",\"kind\":").append(string(e.kind()))
                    .append(",\"holding\":").append(e.holding())
                    .append(",\"sequence\":").append(e.sequence());
            if (!e.ownerReadable()) {
                b.append(",\"fencingToken\":null,\"sessionId\":null,\"created\":null,\"forMillis\":null"
                        + ",\"ownerHost\":null,\"ownerPid\":null,\"ownerThread\":null,\"ownerReadable\":false}");
                continue;
            }
            b.append(",\"fencingToken\":").append(e.fencingToken())
                    .append(",\"sessionId\":").append(string("0x" + Long.toHexString(e.sessionId())))
                    .append(",\"created\":").append(string(e.created().toString()))
                    .append(",\"forMillis\":").append(Duration.between(e.created(), s.readAt()).toMillis())
                    .append(",\"ownerHost\":").append(string(e.ownerHost()))
                    .append(",\"ownerPid\":").append(e.ownerPid())
                    .append(",\"ownerThread\":").append(string(e.ownerThread()))
                    .append(",\"ownerReadable\":true}");
        }
        b.append(queue.isEmpty() ? "]}\n" : "\n]}\n");
        return b.toString();
    }

    private static String count(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    /** @return the entries' names, comma-separated, the first {@link #NAMES_SHOWN} only */
    private static String names(List<Entry> entries) {
        String shown = String.join(", ", entries.stream().limit(NAMES_SHOWN).map(Entry::nodeName).toList());
        return entries.size() <= NAMES_SHOWN ? shown : shown + ", and " + (entries.size() - NAMES_SHOWN) + " more";
    }

    private static String orDash(String s) {
        return s.isEmpty() ? "-" : s;
    }

    /** @return {@code s} as a JSON string literal */
    static String string(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
