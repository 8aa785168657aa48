package io.zkcoord.cli;

import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.inspect.QueueSnapshot.Entry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A {@link QueueSnapshot} as a table for people, or as JSON for programs. */
final class SnapshotFormat {

    private static final String[] HEADER = {"STATE", "KIND", "FOR", "TOKEN", "SESSION", "HOST", "PID", "THREAD", "NODE"};

    private SnapshotFormat() {
    }

    /**
     * One line of summary, then one row per node in queue order: holding or waiting, the kind, how
     * long it has held or waited (from the node's creation to the read), its fencing token and
     * session in hex, the owner's host, process and thread, and the node's name.
     */
    static String table(QueueSnapshot s) {
        StringBuilder b = new StringBuilder();
        long holding = s.entries().stream().filter(Entry::holding).count();
        b.append(s.path()).append(": ");
        if (!s.directoryExists()) {
            b.append("idle: the directory does not exist; nobody holds or waits (read at ").append(s.readAt())
                    .append(")\n");
            return b.toString();
        }
        if (s.entries().isEmpty()) {
            b.append("nobody holds or waits (read at ").append(s.readAt()).append(")\n");
            return b.toString();
        }
        b.append(holding).append(" holding, ").append(s.entries().size() - holding).append(" waiting (read at ")
                .append(s.readAt()).append(")\n");
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (Entry e : s.entries()) {
            rows.add(new String[] {
                e.holding() ? "HOLDING" : "waiting",
                orDash(e.kind()),
                Durations.format(Duration.between(e.created(), s.readAt())),
                "0x" + Long.toHexString(e.fencingToken()),
                e.sessionId() == 0 ? "-" : "0x" + Long.toHexString(e.sessionId()),
                orDash(e.ownerHost()),
                e.ownerPid() < 0 ? "-" : Long.toString(e.ownerPid()),
                orDash(e.ownerThread()),
                e.nodeName(),
            });
        }
        int[] widths = new int[HEADER.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(row[i]);
                if (i < row.length - 1) {
                    line.append(" ".repeat(widths[i] - row[i].length() + 2));
                }
            }
            b.append(line.toString().stripTrailing()).append('\n');
        }
        return b.toString();
    }

    /** The snapshot as one JSON object: {@code path}, {@code readAt}, {@code entries} in queue order. */
    static String json(QueueSnapshot s) {
        StringBuilder b = new StringBuilder();
        b.append("{\"path\":").append(string(s.path()))
                .append(",\"readAt\":").append(string(s.readAt().toString()))
                .append(",\"directoryExists\":").append(s.directoryExists())
                .append(",\"entries\":[");
        for (int i = 0; i < s.entries().size(); i++) {
            Entry e = s.entries().get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append("\n  {\"nodeName\":").append(string(e.nodeName()))
                    .append(",\"kind\":").append(string(e.kind()))
                    .append(",\"holding\":").append(e.holding())
                    .append(",\"sequence\":").append(e.sequence())
                    .append(",\"fencingToken\":").append(e.fencingToken())
                    .append(",\"fencingTokenHex\":").append(string("0x" + Long.toHexString(e.fencingToken())))
                    .append(",\"sessionId\":").append(string("0x" + Long.toHexString(e.sessionId())))
                    .append(",\"created\":").append(string(e.created().toString()))
                    .append(",\"forMillis\":").append(Duration.between(e.created(), s.readAt()).toMillis())
                    .append(",\"ownerHost\":").append(string(e.ownerHost()))
                    .append(",\"ownerPid\":").append(e.ownerPid())
                    .append(",\"ownerThread\":").append(string(e.ownerThread()))
                    .append('}');
        }
        b.append(s.entries().isEmpty() ? "]}\n" : "\n]}\n");
        return b.toString();
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
