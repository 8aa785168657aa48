package io.zkcoord;

import java.nio.charset.StandardCharsets;
import org.apache.zookeeper.common.PathUtils;

/**
 * The path of a lock (or any recipe) for a business key: an order id, a phone number, a user
 * name. Keys are arbitrary strings and a ZooKeeper path is not: {@code "orders/42"} would name two
 * levels, {@code ".."} is refused, and so are control characters. {@link #path(String, String)}
 * maps every string to one child of a parent path, reversibly and readably:
 *
 * <ul>
 *   <li>the characters {@code A-Z a-z 0-9 - _ . ~} stay as they are;
 *   <li>every other character is written as the {@code %XX} escapes of its UTF-8 bytes, upper-case
 *       hex, as in a URL: {@code "orders/42"} becomes {@code orders%2F42}, {@code "a b"} becomes
 *       {@code a%20b}, {@code "é"} becomes {@code %C3%A9};
 *   <li>the names ZooKeeper refuses as a whole are escaped too: {@code "."} becomes {@code %2E},
 *       {@code ".."} becomes {@code %2E%2E}, the empty key becomes {@code %} (no escape is a lone
 *       {@code %});
 *   <li>a lone surrogate (a string that is not well-formed UTF-16) becomes {@code %u} and its four
 *       hex digits: {@code "\uD800"} becomes {@code %uD800};
 *   <li>directly under {@code /}, the key {@code "zookeeper"} becomes {@code %7Aookeeper}, since
 *       {@code /zookeeper} is ZooKeeper's own subtree.
 * </ul>
 *
 * <p>Distinct keys always give distinct paths under one parent: every {@code %} starts either two
 * hex digits or a {@code u} and four, so no escape can be read two ways. The Spring
 * {@code LockRegistry} and the ShedLock provider of this project map their keys with this class,
 * so a key locked through either is the same lock as {@code new ZkMutex(client,
 * KeyPaths.path(parent, key))}.
 *
 * <pre>{@code
 * ZkMutex orderLock = new ZkMutex(client, KeyPaths.path("/locks/orders", orderId));
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class KeyPaths {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private KeyPaths() {
    }

    /**
     * The one path segment that stands for {@code key}, as described in the class comment (without
     * the special case of {@code "zookeeper"} under {@code /}, which only {@link #path} knows).
     *
     * @param key any string
     * @return a non-empty name without {@code /} that ZooKeeper accepts as a node name
     * @throws NullPointerException if {@code key} is null
     */
    public static String childName(String key) {
        if (key.isEmpty()) {
            return "%";
        }
        if (key.equals(".")) {
            return "%2E";
        }
        if (key.equals("..")) {
            return "%2E%2E";
        }
        StringBuilder name = new StringBuilder(key.length());
        key.codePoints().forEach(cp -> {
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                // An unpaired surrogate has no UTF-8 form (the encoder would write '?', the same as
                // the key "?"): it gets an escape of its own, which no byte escape can look like.
                name.append("%u").append(HEX[cp >> 12]).append(HEX[(cp >> 8) & 0xF])
                        .append(HEX[(cp >> 4) & 0xF]).append(HEX[cp & 0xF]);
                return;
            }
            for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
                int c = b & 0xFF;
                if (kept(c)) {
                    name.append((char) c);
                } else {
                    name.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
                }
            }
        });
        return name.toString();
    }

    /**
     * The path of {@code key} as a child of {@code parent}.
     *
     * @param parent an absolute ZooKeeper path without a trailing slash, or {@code /}
     * @param key any string
     * @return {@code parent + "/" + childName(key)} (a single slash under {@code /}); a valid path
     *     that differs for every distinct key under one parent
     * @throws IllegalArgumentException if {@code parent} is not a valid absolute path (empty,
     *     relative, a trailing or double slash, {@code .} or {@code ..} segments)
     * @throws NullPointerException if an argument is null
     */
    public static String path(String parent, String key) {
        if (parent == null || key == null) {
            throw new NullPointerException(parent == null ? "parent" : "key");
        }
        try {
            PathUtils.validatePath(parent);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a ZooKeeper path to put keys under: \"" + parent + "\" ("
                    + e.getMessage() + ")", e);
        }
        String name = childName(key);
        if (parent.equals("/")) {
            return "/" + (name.equals("zookeeper") ? "%7Aookeeper" : name);
        }
        return parent + "/" + name;
    }

    private static boolean kept(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '-' || c == '_' || c == '.' || c == '~';
    }
}
