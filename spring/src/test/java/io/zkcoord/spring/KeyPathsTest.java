package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class KeyPathsTest {

    /** Safe characters stay readable; everything else is percent-encoded from UTF-8. */
    @Test
    void encodesWhatZooKeeperRefusesAndKeepsTheRest() {
        assertThat(KeyPaths.childName("orders-42_x.y~z")).isEqualTo("orders-42_x.y~z");
        assertThat(KeyPaths.childName("orders/42")).isEqualTo("orders%2F42");
        assertThat(KeyPaths.childName("a b")).isEqualTo("a%20b");
        assertThat(KeyPaths.childName("é")).isEqualTo("%C3%A9");
        assertThat(KeyPaths.childName("100%")).isEqualTo("100%25");
        assertThat(KeyPaths.childName("")).isEqualTo("%");
        assertThat(KeyPaths.childName(".")).isEqualTo("%2E");
        assertThat(KeyPaths.childName("..")).isEqualTo("%2E%2E");
        assertThat(KeyPaths.path("/", "a/b")).isEqualTo("/a%2Fb");
        assertThat(KeyPaths.path("/locks", "a/b")).isEqualTo("/locks/a%2Fb");
    }

    /** Every awkward key gives a path ZooKeeper accepts, and distinct keys distinct paths. */
    @Test
    void everyKeyGivesOneValidDistinctPath() {
        List<String> keys = List.of("", ".", "..", "...", "%", "%25", "a/b", "a%2Fb", "/", "//", "zookeeper", "a\u0000b",
                "tab\there", "\u007f", "\ud83d\ude00", "\uffff", "\ue000", "snow \u2603 man", "ключ");
        Set<String> paths = new HashSet<>();
        for (String key : keys) {
            String path = KeyPaths.path("/locks", key);
            PathUtils.validatePath(path);
            paths.add(path);
        }
        assertThat(paths).hasSameSizeAs(keys);
    }
}
