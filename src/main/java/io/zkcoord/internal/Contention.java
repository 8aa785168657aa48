package io.zkcoord.internal;

/**
 * What one client knows of contention in one lifetime of one directory, and the rule that
 * decides from it whether a release whose last view showed no node but its own tries to remove
 * the directory with its node. A pure value: every method returns a new state and sends nothing.
 *
 * <p><b>Why.</b> A release that removes the directory sends {@code multi(delete node, delete
 * dir)}; if someone queued since the releaser last looked, the server refuses it whole ({@code
 * NOTEMPTY}) and the node is deleted alone: 2 writes instead of 1. So a release that cannot vouch
 * for its view (no lone holder's watch, or one that fired) reads the queue first. Under steady
 * contention every holder's view is stale (a waiter granted by a watch last read the queue when
 * it queued), so every handoff would pay that read. A read that finds others (or a refusal) is
 * the evidence: from it on the directory is <i>contended</i> for this client, and its releases
 * neither read nor remove while the mark lasts.
 *
 * <p><b>When the mark ends.</b>
 * <ol>
 *   <li><b>A quiet cycle.</b> A grant decided on a fresh read that showed our node alone records
 *       the directory's child version ({@code cversion}, which every child create and delete
 *       raises by 1) as a probe. At the next such grant, a child version exactly 2 above the probe
 *       proves that nothing touched the directory in between but our own delete and our own
 *       create: nobody else came. The mark ends, and that release tries the removal.
 *   <li><b>A new lifetime.</b> A directory made again (by this client, or seen with another
 *       {@code czxid}) was empty in between: the episode that marked the old one is over.
 * </ol>
 * So a client pays at most one refused removal per directory and contention episode; a key locked
 * in steady contention keeps its directory (the container reaper removes it once it stays empty),
 * and a key that was contended once is removed again by its next use after a quiet cycle, or by
 * its first use once it was made again.
 *
 * <p>A hint like everything in {@link KnownDirectories}: wrong, it costs one refused removal or
 * leaves a directory to the reaper, never a node.
 *
 * @param czxid the lifetime of the directory this knowledge is about, or 0 if not known yet
 * @param contended true after a refused removal in this lifetime, until a quiet cycle
 * @param lastRead the child version of the last read of the directory, or {@link #NONE}
 * @param probe the child version of the last read that granted with our node alone, or {@link #NONE}
 */
record Contention(long czxid, boolean contended, int lastRead, int probe) {

    /** No child version known. */
    static final int NONE = Integer.MIN_VALUE;

    /** Nothing known: not contended. */
    static final Contention UNKNOWN = new Contention(0, false, NONE, NONE);

    /** A directory this client has just made, in lifetime {@code czxid} (0 if not known). */
    static Contention made(long czxid) {
        return new Contention(czxid, false, NONE, NONE);
    }

    /**
     * A read showed the directory: lifetime {@code czxid} (0 if not known), child version {@code
     * cversion}. Another lifetime than the one known starts afresh.
     */
    Contention read(long czxid, int cversion) {
        if (czxid != 0 && this.czxid != 0 && czxid != this.czxid) {
            return new Contention(czxid, false, cversion, NONE);
        }
        return new Contention(czxid != 0 ? czxid : this.czxid, contended, cversion, probe);
    }

    /** A removal of the directory was refused ({@code NOTEMPTY}): someone queued since we looked. */
    Contention refused() {
        return new Contention(czxid, true, lastRead, probe);
    }

    /**
     * A grant decided on a fresh read (the last one, {@link #lastRead}) that showed our node alone.
     *
     * @return the state after it; its {@link #mayRemove()} says whether the release tries the removal
     */
    Contention grantedAlone() {
        boolean quiet = probe != NONE && lastRead != NONE && lastRead == probe + 2;
        return new Contention(czxid, contended && !quiet, lastRead, lastRead);
    }

    /** @return true if a release whose view showed our node alone (fresh, or stale) tries the removal now */
    boolean mayRemove() {
        return !contended;
    }
}
