package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/** The pure rule of the cache, without a server: which events turn one copy into another, in which order. */
class TreeDiffTest {

    private static HeldNode node(long czxid, long mzxid, int version) {
        Stat s = new Stat();
        s.setCzxid(czxid);
        s.setMzxid(mzxid);
        s.setVersion(version);
        return new HeldNode(new byte[0], s);
    }

    private static Map<String, HeldNode> tree(Object... pathsAndNodes) {
        Map<String, HeldNode> m = new LinkedHashMap<>();
        for (int i = 0; i < pathsAndNodes.length; i += 2) {
            m.put((String) pathsAndNodes[i], (HeldNode) pathsAndNodes[i + 1]);
        }
        return m;
    }

    private static List<String> diff(Map<String, HeldNode> before, Map<String, HeldNode> after) {
        return TreeDiff.between(before, after).stream().map(CacheEvent::toString).toList();
    }

    /** The same copy gives nothing. */
    @Test
    void sameCopyNoEvents() {
        Map<String, HeldNode> t = tree("/a", node(1, 1, 0), "/a/b", node(2, 2, 0));
        assertEquals(List.of(), diff(t, tree("/a", node(1, 1, 0), "/a/b", node(2, 2, 0))));
    }

    /** From nothing, every node is created, parents before children whatever the map's order. */
    @Test
    void createdShallowestFirst() {
        Map<String, HeldNode> after = tree("/a/b/c", node(3, 3, 0), "/a", node(1, 1, 0), "/a/b", node(2, 2, 0),
                "/a/d", node(4, 4, 0));
        assertEquals(List.of("CREATED /a", "CREATED /a/b", "CREATED /a/d", "CREATED /a/b/c"), diff(Map.of(), after));
    }

    /** To nothing, every node is deleted, children before parents. */
    @Test
    void deletedDeepestFirst() {
        Map<String, HeldNode> before = tree("/a", node(1, 1, 0), "/a/b", node(2, 2, 0), "/a/b/c", node(3, 3, 0));
        assertEquals(List.of("DELETED /a/b/c", "DELETED /a/b", "DELETED /a"), diff(before, Map.of()));
    }

    /** A node made again (new czxid) with the very same version is deleted then created, its old children first. */
    @Test
    void madeAgainByCzxidNotVersion() {
        Map<String, HeldNode> before = tree("/a", node(1, 1, 0), "/a/n", node(2, 2, 0), "/a/n/k", node(3, 3, 0));
        Map<String, HeldNode> after = tree("/a", node(1, 1, 0), "/a/n", node(9, 9, 0));
        assertEquals(List.of("DELETED /a/n/k", "DELETED /a/n", "CREATED /a/n"), diff(before, after));
    }

    /** A data change missed is a change, by mzxid, even when the version is the same number. */
    @Test
    void changedByMzxid() {
        Map<String, HeldNode> before = tree("/a", node(1, 1, 3));
        assertEquals(List.of("CHANGED /a"), diff(before, tree("/a", node(1, 7, 3))));
        assertEquals(List.of(), diff(before, tree("/a", node(1, 1, 3))));
    }

    /** Deletions all come before arrivals; changes are ordered with the creations by depth. */
    @Test
    void mixed() {
        Map<String, HeldNode> before = tree("/r", node(1, 1, 0), "/r/x", node(2, 2, 0), "/r/y", node(3, 3, 0),
                "/r/y/z", node(4, 4, 0));
        Map<String, HeldNode> after = tree("/r", node(1, 5, 1), "/r/x", node(2, 6, 1), "/r/w", node(7, 7, 0),
                "/r/w/v", node(8, 8, 0));
        assertEquals(List.of("DELETED /r/y/z", "DELETED /r/y", "CHANGED /r", "CREATED /r/w", "CHANGED /r/x",
                "CREATED /r/w/v"), diff(before, after));
    }

    /** Depth counts segments; the root is 0. */
    @Test
    void depth() {
        assertEquals(0, TreeDiff.depth("/"));
        assertEquals(1, TreeDiff.depth("/a"));
        assertEquals(3, TreeDiff.depth("/a/b/c"));
    }
}
