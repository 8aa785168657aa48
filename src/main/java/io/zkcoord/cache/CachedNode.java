package io.zkcoord.cache;

import java.util.Arrays;
import org.apache.zookeeper.data.Stat;

/**
 * One znode as a {@link ZkCache} holds it: its path (absolute, as the client sees it, without the
 * connect string's chroot), its data and its {@link Stat}.
 *
 * <p>{@code czxid} tells one life of a node from the next (a node deleted and made again has a new
 * one); {@code mzxid} tells one version of its data from the next. {@code numChildren}, {@code
 * cversion} and {@code pzxid} are as of the last read of the node: the cache's one watch reports
 * data changes, creations and deletions, not every change of a node's child list.
 *
 * <p>Immutable and thread-safe: the data and the stat are copied when the record is made and on
 * every access, so changing an array or a {@code Stat} got from it never changes the cache.
 *
 * @param path the node's absolute path
 * @param data the node's data, or null when the cache was built with {@code cacheData(false)}
 * @param stat the node's stat
 */
public record CachedNode(String path, byte[] data, Stat stat) {

    /**
     * Makes a node, copying {@code data} and {@code stat}.
     *
     * @param path the node's absolute path
     * @param data the node's data, or null
     * @param stat the node's stat
     * @throws IllegalArgumentException if {@code path} or {@code stat} is null
     */
    public CachedNode {
        if (path == null || stat == null) {
            throw new IllegalArgumentException("path and stat must not be null");
        }
        data = data == null ? null : data.clone();
        stat = copy(stat);
    }

    /** @return a copy of the node's data, or null when the cache keeps no data */
    @Override
    public byte[] data() {
        return data == null ? null : data.clone();
    }

    /** @return a copy of the node's stat */
    @Override
    public Stat stat() {
        return copy(stat);
    }

    /** Equal when the paths, the data (by content) and the stats are equal. */
    @Override
    public boolean equals(Object o) {
        return o instanceof CachedNode other && path.equals(other.path) && Arrays.equals(data, other.data)
                && stat.equals(other.stat);
    }

    @Override
    public int hashCode() {
        return (path.hashCode() * 31 + Arrays.hashCode(data)) * 31 + stat.hashCode();
    }

    @Override
    public String toString() {
        return "CachedNode[" + path + ", " + (data == null ? "no data" : data.length + " bytes") + ", czxid 0x"
                + Long.toHexString(stat.getCzxid()) + ", mzxid 0x" + Long.toHexString(stat.getMzxid()) + ", version "
                + stat.getVersion() + "]";
    }

    private static Stat copy(Stat s) {
        return new Stat(s.getCzxid(), s.getMzxid(), s.getCtime(), s.getMtime(), s.getVersion(), s.getCversion(),
                s.getAversion(), s.getEphemeralOwner(), s.getDataLength(), s.getNumChildren(), s.getPzxid());
    }
}
