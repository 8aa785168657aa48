package io.zkcoord.inspect;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One reading of a queue directory: its nodes in queue order, each with who owns it and whether it
 * holds. A value: immutable and thread-safe. Made by {@link Inspector#inspect}.
 *
 * <p>Three cases look alike in {@link #entries()} alone and are told apart here: a directory that
 * does not exist ({@link #exists()} false: nothing holds or waits there; the locks delete an idle
 * lock's directory, so this is also an idle lock), an existing directory with no children (an idle
 * lock whose directory is kept), and a node that is not a lock directory at all, such as a parent
 * of lock directories ({@link #isQueueDirectory()} false: its children are {@link
 * #notQueueNodes()}).
 *
 * @param path the directory that was read
 * @param readAt when the read of the nodes' data was answered (this machine's clock)
 * @param entries the directory's nodes: the queue in queue order (by sequence number), then any
 *     child whose name is not a queue node's (ordered by name; they never hold)
 * @param exists false if the directory did not exist when it was read (then {@code entries} is
 *     empty)
 */
public record QueueSnapshot(String path, Instant readAt, List<QueueSnapshot.Entry> entries, boolean exists) {

    /**
     * @param path the directory that was read
     * @param readAt when the read was answered
     * @param entries the directory's nodes, in the order described above
     * @param exists false if the directory did not exist
     * @throws IllegalArgumentException if an argument is null, or {@code exists} is false while
     *     {@code entries} is not empty
     */
    public QueueSnapshot {
        if (path == null || readAt == null || entries == null) {
            throw new IllegalArgumentException("path, readAt and entries must not be null");
        }
        if (!exists && !entries.isEmpty()) {
            throw new IllegalArgumentException("a directory that does not exist has no entries");
        }
        entries = List.copyOf(entries);
    }

    /**
     * A snapshot of a directory that exists.
     *
     * @param path the directory that was read
     * @param readAt when the read was answered
     * @param entries the directory's nodes, in the order described above
     * @throws IllegalArgumentException if an argument is null
     */
    public QueueSnapshot(String path, Instant readAt, List<QueueSnapshot.Entry> entries) {
        this(path, readAt, entries, true);
    }

    /**
     * @return the children whose names are not queue nodes' (kind empty): a lock directory has
     *     none of its own; a parent of lock directories has only these (its sub-directories)
     */
    public List<Entry> notQueueNodes() {
        return entries.stream().filter(e -> e.kind().isEmpty()).toList();
    }

    /**
     * @return false if the path holds children and none of them is a queue node (for instance a
     *     parent of lock directories, such as {@code /locks}); true for a lock directory, an empty
     *     one, or one that does not exist
     */
    public boolean isQueueDirectory() {
        return entries.isEmpty() || entries.stream().anyMatch(e -> !e.kind().isEmpty());
    }

    /**
     * @return true if nobody holds or waits: no entry is a queue node (the directory is empty,
     *     holds only other children, or does not exist, {@link #exists()} false, which is how a
     *     lock nobody uses now looks: its last release removed the directory)
     */
    public boolean idle() {
        return entries.stream().allMatch(e -> e.kind().isEmpty());
    }

    /**
     * @return the entries whose ACL withheld READ from the client that read them ("not
     *     authorized"; see {@link Entry}), in the order of {@link #entries()}
     */
    public List<Entry> notAuthorized() {
        return entries.stream().filter(e -> !e.ownerReadable()).toList();
    }

    /** @return the entries that hold now (several for readers or a semaphore) */
    public List<Entry> holders() {
        return entries.stream().filter(Entry::holding).toList();
    }

    /** @return the entries that wait, in queue order */
    public List<Entry> waiters() {
        return entries.stream().filter(e -> !e.holding()).toList();
    }

    /**
     * @param nodeName a node's name, without the directory
     * @return the entry of the node named {@code nodeName}, if it was read
     */
    public Optional<Entry> entry(String nodeName) {
        return entries.stream().filter(e -> e.nodeName().equals(nodeName)).findFirst();
    }

    /**
     * One node of the directory. Fields that cannot be read from a node (a name or data that no
     * zkcoord recipe wrote) are empty strings, or -1 for numbers.
     *
     * <p><b>A node this client may not read.</b> When the directory lets the client list it but a
     * node's own ACL withholds READ from the client's identities, the node is still reported, at its
     * place in the queue and counted by its recipe's rule, with {@link #ownerReadable()} false
     * ("not authorized"): its name, kind and sequence come from its name; its data and stat could
     * not be read, so {@code fencingToken} is -1, {@code sessionId} 0, {@code created} null, and the
     * owner fields are empty. Its {@code holding} is what its place in the queue says.
     *
     * @param nodeName the node's name, without the directory
     * @param kind the kind its name says ({@code lock}, {@code read}, {@code write}, {@code sem},
     *     {@code leader}, {@code multi}, or another recipe's), or empty if the name is not a queue
     *     node's
     * @param sequence the sequence number ZooKeeper appended to its name, or -1
     * @param fencingToken the node's {@code czxid}: the fencing token of its hold; -1 if unknown
     * @param sessionId the session that owns it ({@code ephemeralOwner}; 0 for a persistent node, or
     *     if unknown)
     * @param created when the server created it ({@code ctime}, the leader's clock); null if the
     *     node could not be read ({@code ownerReadable} false)
     * @param ownerHost the host name recorded in its data, or empty
     * @param ownerPid the process id recorded in its data, or -1
     * @param ownerThread the thread name recorded in its data; for an election node ({@code leader}),
     *     the participant id (its whole data); or empty
     * @param holding true if the node holds by its recipe's rule (see {@link Inspector})
     * @param ownerReadable false if the node's ACL withholds READ from this client ("not
     *     authorized"): its data, so its owner fields, could not be read
     */
    public record Entry(String nodeName, String kind, long sequence, long fencingToken, long sessionId,
                        Instant created, String ownerHost, long ownerPid, String ownerThread, boolean holding,
                        boolean ownerReadable) {

        /**
         * An entry whose data was read ({@link #ownerReadable()} true).
         *
         * @param nodeName the node's name, without the directory
         * @param kind the kind its name says, or empty
         * @param sequence the sequence number, or -1
         * @param fencingToken the node's {@code czxid}
         * @param sessionId the session that owns it, 0 for a persistent node
         * @param created when the server created it
         * @param ownerHost the host name recorded in its data, or empty
         * @param ownerPid the process id recorded in its data, or -1
         * @param ownerThread the thread name (or participant id) recorded in its data, or empty
         * @param holding true if the node holds by its recipe's rule
         */
        public Entry(String nodeName, String kind, long sequence, long fencingToken, long sessionId, Instant created,
                String ownerHost, long ownerPid, String ownerThread, boolean holding) {
            this(nodeName, kind, sequence, fencingToken, sessionId, created, ownerHost, ownerPid, ownerThread, holding,
                    true);
        }
    }
}
