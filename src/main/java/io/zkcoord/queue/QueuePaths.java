package io.zkcoord.queue;

import org.apache.zookeeper.common.PathUtils;

/** Validation of lock paths, so bad input fails at construction rather than mid-protocol. */
public final class QueuePaths {

    private QueuePaths() {
    }

    /**
     * @param recipe what the path is for, as the message names it to the user ({@code "semaphore"},
     *     {@code "mutex"}, ...): the message then reads "semaphore path must start with '/'"
     * @param path the path to check
     * @return {@code path}, if it can name a lock directory
     * @throws IllegalArgumentException if null, empty, relative, ending with or doubling {@code /},
     *     containing characters ZooKeeper rejects, or inside {@code /zookeeper}
     */
    public static String validate(String recipe, String path) {
        String what = recipe + " path";
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be null or empty");
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException(what + " must start with '/': " + path);
        }
        if (path.endsWith("/")) {
            throw new IllegalArgumentException(what + " must not end with '/': " + path);
        }
        if (path.contains("//")) {
            throw new IllegalArgumentException(what + " must not contain '//': " + path);
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException(what + " must not be inside /zookeeper: " + path);
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + what + " " + path + ": " + e.getMessage(), e);
        }
        return path;
    }

    /** @return the parent of a valid path: {@code /a} for {@code /a/b}, {@code /} for {@code /a} */
    static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash == 0 ? "/" : path.substring(0, slash);
    }
}
