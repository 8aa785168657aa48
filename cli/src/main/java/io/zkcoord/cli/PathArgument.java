package io.zkcoord.cli;

import java.util.Arrays;
import java.util.stream.Collectors;
import org.apache.zookeeper.common.PathUtils;

/**
 * A ZooKeeper path typed on the command line ({@code inspect}'s PATH, {@code run}'s {@code --lock}
 * and the others), checked before anything connects, with a message that names the argument as
 * the user typed it and what to type instead ({@code PATH 'locks/x' must start with '/': write
 * /locks/x}), not the library's name for it. Stateless.
 */
final class PathArgument {

    private static final String EXAMPLE = "/locks/nightly-export";

    private PathArgument() {
    }

    /**
     * @param argument the argument's name as the usage shows it ({@code PATH}, {@code --lock})
     * @param path what was typed
     * @return {@code path}, if it can name a recipe's path
     * @throws IllegalArgumentException (bad arguments, exit 2) saying what is wrong and what to
     *     write: empty, relative, the root, a trailing or doubled {@code /}, inside {@code
     *     /zookeeper}, or a character ZooKeeper refuses
     */
    static String check(String argument, String path) {
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException(argument + " is empty: name a lock's path, e.g. " + EXAMPLE);
        }
        String tidy = Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).collect(Collectors.joining("/", "/", ""));
        String typed = argument + " '" + path + "'";
        if (tidy.equals("/")) {
            throw new IllegalArgumentException(typed + " is the root, not a lock's path: name one under it, e.g. "
                    + EXAMPLE);
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException(typed + " must start with '/': write " + tidy);
        }
        if (path.endsWith("/")) {
            throw new IllegalArgumentException(typed + " must not end with '/': write " + tidy);
        }
        if (path.contains("//")) {
            throw new IllegalArgumentException(typed + " has an empty name between '//': write " + tidy);
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException(typed + " is inside /zookeeper, ZooKeeper's own tree: name a lock's "
                    + "path, e.g. " + EXAMPLE);
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(typed + " is not a ZooKeeper path: " + e.getMessage(), e);
        }
        return path;
    }
}
