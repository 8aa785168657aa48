package io.zkcoord.lock;

/**
 * The kinds of node in a lock directory, named by the prefix of the node name. {@link ZkMutex},
 * both sides of {@link ZkReadWriteLock} (and every exclusive lock to come) share one directory
 * format, so that on one path they exclude each other as the rule says.
 */
enum NodeKind {
    /** A {@link ZkMutex} holder or waiter: exclusive. */
    LOCK("lock", "mutex", false),
    /** A read-lock holder or waiter: shares with other reads. */
    READ("read", "read-write lock", true),
    /** A write-lock holder or waiter: exclusive. */
    WRITE("write", "read-write lock", false),
    /** A {@link ZkMultiLock} holder or waiter, one node in each of its paths: exclusive. */
    MULTI("multi", "multi-lock", false);

    private final String prefix;
    private final String recipe;
    private final boolean shared;

    NodeKind(String prefix, String recipe, boolean shared) {
        this.prefix = prefix;
        this.recipe = recipe;
        this.shared = shared;
    }

    String prefix() {
        return prefix;
    }

    /** @return the recipe whose holders make this kind of node, as error messages name it */
    String recipe() {
        return recipe;
    }

    /** @return true if holders of this kind may hold together (reads) */
    boolean shared() {
        return shared;
    }

    /** @return the kind of {@code node}, or null if it is not a lock node */
    static NodeKind of(io.zkcoord.queue.QueueNode node) {
        return ofPrefix(node.kind());
    }

    /** @return the kind named by {@code prefix}, or null */
    static NodeKind ofPrefix(String prefix) {
        for (NodeKind k : values()) {
            if (k.prefix.equals(prefix)) {
                return k;
            }
        }
        return null;
    }
}
