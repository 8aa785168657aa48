package io.zkcoord.spring;

import java.nio.charset.StandardCharsets;

/**
 * Maps a lock key to one child name under the registry's root path, for every string: the
 * characters {@code A-Z a-z 0-9 - _ . ~} stay as they are; every other character is written as the
 * {@code %XX} escapes of its UTF-8 bytes (upper-case hex), as in a URL. So {@code "orders/42"}
 * becomes {@code orders%2F42}, {@code "a b"} becomes {@code a%20b} and {@code "é"} becomes {@code
 * %C3%A9}. The names ZooKeeper refuses as a whole are escaped too: {@code "."} becomes {@code %2E},
 * {@code ".."} becomes {@code %2E%2E}, and the empty key becomes {@code %} (no escape is a lone
 * {@code %}). A lone surrogate (a string that is not well-formed UTF-16) becomes {@code %u} and
 * its four hex digits, {@code "\uD800"} becoming {@code %uD800}. Distinct keys always give distinct
 * names: every {@code %} starts either two hex digits or a {@code u} and four.
 *
 * <p>Stateless and thread-safe.
 */
final class KeyPaths {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private KeyPaths() {
    }

    /** @return the child name of {@code key}, never empty, never containing {@code /} */
    static String childName(String key) {
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
     * @return the full path of {@code key} under {@code root} ({@code root} as validated: no trailing
     *     slash, or "/"). Under "/", the key {@code "zookeeper"} becomes {@code /%7Aookeeper}: {@code
     *     /zookeeper} is ZooKeeper's own subtree, and a {@code z} is otherwise never escaped, so no
     *     other key has that name.
     */
    static String path(String root, String key) {
        String name = childName(key);
        if (root.equals("/")) {
            return "/" + (name.equals("zookeeper") ? "%7Aookeeper" : name);
        }
        return root + "/" + name;
    }

    private static boolean kept(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '-' || c == '_' || c == '.' || c == '~';
    }
}
