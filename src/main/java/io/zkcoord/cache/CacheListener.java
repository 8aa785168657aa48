package io.zkcoord.cache;

/**
 * Hears what changes in a {@link ZkCache}.
 *
 * <p>Calls come one at a time, on a thread of the library (never ZooKeeper's event thread), never
 * while a lock of the cache is held, so a listener may call the cache (or close it). One path's
 * events come in the order the changes were made; a parent's {@code created} comes before its
 * children's, and a child's {@code deleted} before its parent's. A listener that throws anything
 * (an {@link Error} too) is logged and does not stop the others nor the cache. A slow listener
 * delays the next calls, not the cache's own copy.
 *
 * <p>Every method does nothing by default: implement those you need.
 */
public interface CacheListener {

    /**
     * A node appeared: made while the cache watched, found by the first load, or found by a load
     * after a reconnection or a new session.
     *
     * @param node the node as read
     */
    default void created(CachedNode node) {
    }

    /**
     * A node's data changed (its {@code mzxid} is newer). Changes made while the cache could not see
     * them are reported once, with the data read afterwards.
     *
     * @param before the node as held until now
     * @param after the node as read now
     */
    default void changed(CachedNode before, CachedNode after) {
    }

    /**
     * A node went. A node deleted and made again while the cache could not see it is reported as
     * {@code deleted} and then {@code created} (its {@code czxid} differs).
     *
     * @param before the node as held until now
     */
    default void deleted(CachedNode before) {
    }

    /** The first load is complete and every node it found was reported as {@code created}. Called once. */
    default void initialized() {
    }
}
