package io.zkcoord.cache;

/**
 * One change the cache applies to its copy and then reports to its listeners. Immutable.
 *
 * @param kind what happened
 * @param path the node's absolute path
 * @param before the node as held before (null for {@link Kind#CREATED})
 * @param after the node as read (null for {@link Kind#DELETED})
 */
record CacheEvent(Kind kind, String path, HeldNode before, HeldNode after) {

    enum Kind { CREATED, CHANGED, DELETED }

    static CacheEvent created(String path, HeldNode after) {
        return new CacheEvent(Kind.CREATED, path, null, after);
    }

    static CacheEvent changed(String path, HeldNode before, HeldNode after) {
        return new CacheEvent(Kind.CHANGED, path, before, after);
    }

    static CacheEvent deleted(String path, HeldNode before) {
        return new CacheEvent(Kind.DELETED, path, before, null);
    }

    @Override
    public String toString() {
        return kind + " " + path;
    }
}
