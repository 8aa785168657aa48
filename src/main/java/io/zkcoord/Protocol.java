package io.zkcoord;

/**
 * How a recipe names its queue nodes: ours, or Curator's, so that both libraries can share one path.
 *
 * <p>Under either protocol every recipe <em>reads</em> both forms: a node that Apache Curator (or a
 * zkcoord recipe under {@link #CURATOR}) made counts in the queue as a contender, in sequence
 * order, and is never ignored. What the protocol chooses is what the recipe <em>writes</em> and how
 * it orders the queue:
 * <ul>
 *   <li>{@link #ZKCOORD}, the default: nodes named {@code <kind>-<attemptId>-<sequence>}, ordered by
 *       sequence number. Curator does not read these names correctly (it sorts them by the text after
 *       {@code lock-}, which is random): use it only on paths no Curator process uses any more.
 *   <li>{@link #CURATOR}: nodes named as Curator names them ({@code _c_<uuid>-lock-<sequence>} for
 *       a mutex, {@code __WRIT__}/{@code __READ__} for a read/write lock, {@code latch-} for an
 *       election), with Curator's data, ordered as Curator orders them and watched as Curator
 *       watches: with Curator's {@code InterProcessMutex}, {@code InterProcessReadWriteLock} or
 *       {@code LeaderLatch} on the same path it is one fair queue. (A {@code LeaderSelector} is a
 *       mutex: share its path with a {@code ZkMutex}, not with an election.) Everything the recipe promises
 *       (fencing tokens, leases, guarded commits, time limits, herd-free waits) still holds for the
 *       zkcoord side.
 * </ul>
 * See docs/migrating-from-curator.md for a rolling migration, step by step.
 */
public enum Protocol {
    /** zkcoord's own node names and order; the default of every recipe. */
    ZKCOORD,
    /** Apache Curator's node names, data and order, to share a path with Curator clients. */
    CURATOR
}
