package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class KeyPathsTest {

    /** Safe characters stay readable; everything else is percent-encoded from UTF-8. */
    @Test
    void encodesWhatZooKeeperRefusesAndKeepsTheRest() {
        assertEquals("orders-42_x.y~z", KeyPaths.childName("orders-42_x.y~z"));
        assertEquals("orders%2F42", KeyPaths.childName("orders/42"));
        assertEquals("a%20b", KeyPaths.childName("a b"));
        assertEquals("%C3%A9", KeyPaths.childName("é"));
        assertEquals("100%25", KeyPaths.childName("100%"));
        assertEquals("%", KeyPaths.childName(""));
        assertEquals("%2E", KeyPaths.childName("."));
        assertEquals("%2E%2E", KeyPaths.childName(".."));
        assertEquals("%uD800", KeyPaths.childName("\uD800"));
        assertEquals("/a%2Fb", KeyPaths.path("/", "a/b"));
        assertEquals("/locks/a%2Fb", KeyPaths.path("/locks", "a/b"));
    }

    /** ZooKeeper's own subtree is never a key's path; elsewhere "zookeeper" is an ordinary name. */
    @Test
    void theKeyZookeeperUnderTheRootIsNotZooKeepersSubtree() {
        assertEquals("/%7Aookeeper", KeyPaths.path("/", "zookeeper"));
        assertEquals("/locks/zookeeper", KeyPaths.path("/locks", "zookeeper"));
        assertEquals("/zookeeper2", KeyPaths.path("/", "zookeeper2"));
    }

    /** Every awkward key gives a path ZooKeeper accepts, and distinct keys distinct paths. */
    @Test
    void everyKeyGivesOneValidDistinctPath() {
        List<String> keys = List.of("", ".", "..", "...", "%", "%25", "a/b", "a%2Fb", "/", "//", "zookeeper",
                "%7Aookeeper", "a\u0000b", "tab\there", "\u007f", "\ud83d\ude00", "\uffff", "\ue000", "\uD800",
                "%uD800", "?", "snow \u2603 man", "ключ");
        for (String parent : List.of("/", "/locks", "/a/b")) {
            Set<String> paths = new HashSet<>();
            for (String key : keys) {
                String path = KeyPaths.path(parent, key);
                PathUtils.validatePath(path);
                assertTrue(path.startsWith(parent.equals("/") ? "/" : parent + "/"), path);
                assertEquals(-1, path.indexOf('/', parent.length() + 1), "one level below the parent: " + path);
                paths.add(path);
            }
            assertEquals(keys.size(), paths.size(), "distinct paths under " + parent);
        }
    }

    @Test
    void aParentThatIsNotAnAbsolutePathIsRefused() {
        for (String parent : List.of("", "locks", "/locks/", "/a//b", "/a/./b", "/a/..")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyPaths.path(parent, "k"));
            assertTrue(e.getMessage().contains("\"" + parent + "\""), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> KeyPaths.path(null, "k"));
        assertThrows(NullPointerException.class, () -> KeyPaths.path("/locks", null));
        assertThrows(NullPointerException.class, () -> KeyPaths.childName(null));
    }
}
