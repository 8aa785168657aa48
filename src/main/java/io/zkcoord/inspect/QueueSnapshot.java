package io.zkcoord.inspect;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One reading of a queue directory: its nodes in queue order, each with who owns it and whether it
 * holds. A value: immutable and thread-safe. Made by {@link Inspector#inspect}.
 *
 * @param path the directory that was read
 * @param readAt when the read of the nodes' data was answered (this machine's clock)
 * @param entries the directory's nodes: the queue in queue order (by sequence number), then any
 *     child whose name is not a queue node's (ordered by name; they never hold)
 * @param directoryExists false if the directory did not exist when read: the idle state of a lock
 *     on a key nobody uses now (the last release removes the directory with its node, and the next
 *     acquisition makes it again), not an error
 */
public record QueueSnapshot(String path, Instant readAt, List<QueueSnapshot.Entry> entries, boolean directoryExists) {

    /** A snapshot of a directory that exists. */
    public QueueSnapshot(String path, Instant readAt, List<QueueSnapshot.Entry> entries) {
        this(path, readAt, entries, true);
    }

    /**
     * @throws IllegalArgumentException if an argument is null
     */
    public QueueSnapshot {
        if (path == null || readAt == null || entries == null) {
            throw new IllegalArgumentException("path, readAt and entries must not be null");
        }
        entries = List.copyOf(entries);
    }

    /** @return true if nobody holds or waits: the directory is empty, or does not exist */
    public boolean idle() {
        return entries.isEmpty();
    }

    /** @return the entries that hold now (several for readers or a semaphore) */
    public List<Entry> holders() {
        return entries.stream().filter(Entry::holding).toList();
    }

    /** @return the entries that wait, in queue order */
    public List<Entry> waiters() {
        return entries.stream().filter(e -> !e.holding()).toList();
    }

    /** @return the entry of the node named {@code nodeName}, if it was read */
    public Optional<Entry> entry(String nodeName) {
        return entries.stream().filter(e -> e.nodeName().equals(nodeName)).findFirst();
    }

    /**
     * One node of the directory. Fields that cannot be read from a node (a name or data that no
     * zkcoord recipe wrote) are empty strings, or -1 for numbers.
     *
     * @param nodeName the node's name, without the directory
     * @param kind the kind its name says ({@code lock}, {@code read}, {@code write}, {@code sem},
     *     {@code leader}, {@code multi}, or another recipe's), or empty if the name is not a queue
     *     node's
     * @param sequence the sequence number ZooKeeper appended to its name, or -1
     * @param fencingToken the node's {@code czxid}: the fencing token of its hold
     * @param sessionId the session that owns it ({@code ephemeralOwner}; 0 for a persistent node)
     * @param created when the server created it ({@code ctime}, the leader's clock)
     * @param ownerHost the host name recorded in its data, or empty
     * @param ownerPid the process id recorded in its data, or -1
     * @param ownerThread the thread name recorded in its data; for an election node ({@code leader}),
     *     the participant id (its whole data); or empty
     * @param holding true if the node holds by its recipe's rule (see {@link Inspector})
     */
    public record Entry(String nodeName, String kind, long sequence, long fencingToken, long sessionId,
                        Instant created, String ownerHost, long ownerPid, String ownerThread, boolean holding) {
    }
}
