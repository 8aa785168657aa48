package io.zkcoord.queue;

import org.apache.zookeeper.common.PathUtils;

/** Validation of lock paths, so bad input fails at construction rather than mid-protocol. */
public final class QueuePaths {

    private QueuePaths() {
    }

    /**
     * @return {@code path}, if it can name a lock directory
     * @throws IllegalArgumentException if null, empty, relative, ending with or doubling {@code /},
     *     containing characters ZooKeeper rejects, or inside {@code /zookeeper}
     */
    public static String validate(String path) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("lock path must not be null or empty");
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("lock path must start with '/': " + path);
        }
        if (path.endsWith("/")) {
            throw new IllegalArgumentException("lock path must not end with '/': " + path);
        }
        if (path.contains("//")) {
            throw new IllegalArgumentException("lock path must not contain '//': " + path);
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("lock path must not be inside /zookeeper: " + path);
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid lock path " + path + ": " + e.getMessage(), e);
        }
        return path;
    }

    /** @return the parent of a valid path: {@code /a} for {@code /a/b}, {@code /} for {@code /a} */
    static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash == 0 ? "/" : path.substring(0, slash);
    }
}
