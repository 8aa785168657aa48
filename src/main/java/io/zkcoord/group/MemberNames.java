package io.zkcoord.group;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Member ids as node names: {@code m-} plus the id URL-encoded in UTF-8, so that any id (with
 * {@code /}, spaces, any script) is one valid node name, and one id is one name: ZooKeeper itself
 * refuses a second member with the same id.
 */
final class MemberNames {

    static final String PREFIX = "m-";

    private MemberNames() {
    }

    static String nodeName(String id) {
        return PREFIX + URLEncoder.encode(id, StandardCharsets.UTF_8).replace("*", "%2A");
    }

    /** @return the id a child name stands for, or empty if the child is not a member node */
    static Optional<String> id(String nodeName) {
        if (!nodeName.startsWith(PREFIX)) {
            return Optional.empty();
        }
        try {
            return Optional.of(URLDecoder.decode(nodeName.substring(PREFIX.length()), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
