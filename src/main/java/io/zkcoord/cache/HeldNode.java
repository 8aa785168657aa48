package io.zkcoord.cache;

import java.util.TreeMap;
import org.apache.zookeeper.data.Stat;

/**
 * One znode as held: its data and the fields of its {@link Stat}, kept inline (not as a {@code Stat}
 * object) because a cache may hold hundreds of thousands of them. The facts are final; {@link
 * #children} is the one mutable field, owned by {@link CacheTree} and touched only under its lock.
 *
 * <p>The node's name and path are not stored: the parent's child map holds the name, and the path is
 * rebuilt when a node is handed out.
 */
final class HeldNode {

    /** The node's data as read, never handed out (copies are); null when data is not kept. */
    final byte[] data;
    final long czxid;
    final long mzxid;
    final long ctime;
    final long mtime;
    final long ephemeralOwner;
    final long pzxid;
    final int version;
    final int cversion;
    final int aversion;
    final int dataLength;
    final int numChildren;

    /** Children by name, sorted; null when none are held. Guarded by the owning {@link CacheTree}. */
    TreeMap<String, HeldNode> children;

    /**
     * @param data the data, which the caller hands over (it must not keep a reference), or null
     * @param stat the stat as read
     */
    HeldNode(byte[] data, Stat stat) {
        this.data = data;
        this.czxid = stat.getCzxid();
        this.mzxid = stat.getMzxid();
        this.ctime = stat.getCtime();
        this.mtime = stat.getMtime();
        this.ephemeralOwner = stat.getEphemeralOwner();
        this.pzxid = stat.getPzxid();
        this.version = stat.getVersion();
        this.cversion = stat.getCversion();
        this.aversion = stat.getAversion();
        this.dataLength = stat.getDataLength();
        this.numChildren = stat.getNumChildren();
    }

    /** @return the same znode in the same life ({@code czxid} equal) */
    boolean sameLife(HeldNode other) {
        return czxid == other.czxid;
    }

    /** @return a fresh {@code Stat} with this node's fields */
    Stat stat() {
        return new Stat(czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength,
                numChildren, pzxid);
    }

    /** @return the public face of this node at {@code path} (copies the data) */
    CachedNode toCached(String path) {
        return new CachedNode(path, data, stat());
    }

    @Override
    public String toString() {
        return "HeldNode[czxid 0x" + Long.toHexString(czxid) + ", mzxid 0x" + Long.toHexString(mzxid) + ", version "
                + version + "]";
    }
}
