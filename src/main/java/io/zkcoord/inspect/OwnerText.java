package io.zkcoord.inspect;

import java.nio.charset.StandardCharsets;

/**
 * What a node's data says of its owner, parsed leniently: the recipes write {@code host=H pid=P
 * thread=T requested=INSTANT}, a multi-lock adds {@code  paths=/a,/b}, an election node holds its
 * participant id. Thread names may contain spaces (and even {@code requested=}): the thread is
 * everything between {@code thread=} and the <em>last</em> {@code  requested=}. Data in no known
 * shape gives empty fields, never an exception.
 *
 * @param host the host, or empty
 * @param pid the process id, or -1
 * @param thread the thread name (or participant id), or empty
 */
record OwnerText(String host, long pid, String thread) {

    static final OwnerText UNKNOWN = new OwnerText("", -1, "");

    private static final String HOST = "host=";
    private static final String PID = " pid=";
    private static final String THREAD = " thread=";
    private static final String REQUESTED = " requested=";

    /** @return the owner an election node's data names: its participant id, as the thread */
    static OwnerText ofParticipant(byte[] data) {
        return new OwnerText("", -1, text(data));
    }

    /**
     * @return the owner a Curator node's data names: Curator's default data is the client's IP
     *     address (the host); a {@code LeaderSelector} writes its participant id (the thread field,
     *     as for an election node)
     */
    static OwnerText ofCurator(byte[] data) {
        String text = text(data);
        return text.matches("[0-9.]+|[0-9a-fA-F:]+(%.*)?") ? new OwnerText(text, -1, "") : new OwnerText("", -1, text);
    }

    /** @return the owner that OwnerInfo-shaped {@code data} names, or {@link #UNKNOWN} */
    static OwnerText parse(byte[] data) {
        String text = text(data);
        if (!text.startsWith(HOST)) {
            return UNKNOWN;
        }
        int pidAt = text.indexOf(PID);
        if (pidAt < 0) {
            return UNKNOWN;
        }
        String host = text.substring(HOST.length(), pidAt);
        int threadAt = text.indexOf(THREAD, pidAt + PID.length());
        if (threadAt < 0 || host.contains(" ")) {
            return UNKNOWN;
        }
        long pid;
        try {
            pid = Long.parseLong(text.substring(pidAt + PID.length(), threadAt));
        } catch (NumberFormatException e) {
            return UNKNOWN;
        }
        int threadStart = threadAt + THREAD.length();
        int requestedAt = text.lastIndexOf(REQUESTED);
        String thread = requestedAt >= threadStart ? text.substring(threadStart, requestedAt) : text.substring(threadStart);
        return new OwnerText(host, pid, thread);
    }

    private static String text(byte[] data) {
        return data == null ? "" : new String(data, StandardCharsets.UTF_8);
    }
}
