package io.zkcoord.cache;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The events that turn one copy of a subtree into another: the pure rule of the cache, used for a
 * whole load (after a reconnection or in a new session) and for the read of a single node.
 *
 * <ul>
 *   <li>A path held before and not after, or after with another {@code czxid} (a new life of the
 *       node), is {@code DELETED}; a path after and not before, or with another {@code czxid}, is
 *       {@code CREATED}. So a node deleted and made again is reported deleted, then created,
 *       whatever its {@code version}.
 *   <li>The same life with another {@code mzxid} is {@code CHANGED}: a data change, even one whose
 *       {@code version} came back to the same number through a new life cannot hide.
 *   <li>Order: every deletion first, deepest first (a child's before its parent's); then creations
 *       and changes, shallowest first (a parent's before its children's). A replaced path is thus
 *       deleted before it is created.
 * </ul>
 * Stateless; thread-safe.
 */
final class TreeDiff {

    private TreeDiff() {
    }

    /**
     * @param before the nodes held, by absolute path; a tree (every node's parent is in it, but the top)
     * @param after the nodes read, by absolute path; a tree
     * @return the events, in the order above; empty if the two are the same
     */
    static List<CacheEvent> between(Map<String, HeldNode> before, Map<String, HeldNode> after) {
        List<CacheEvent> deletions = new ArrayList<>();
        for (Map.Entry<String, HeldNode> e : before.entrySet()) {
            HeldNode now = after.get(e.getKey());
            if (now == null || !now.sameLife(e.getValue())) {
                deletions.add(CacheEvent.deleted(e.getKey(), e.getValue()));
            }
        }
        List<CacheEvent> arrivals = new ArrayList<>();
        for (Map.Entry<String, HeldNode> e : after.entrySet()) {
            HeldNode was = before.get(e.getKey());
            if (was == null || !was.sameLife(e.getValue())) {
                arrivals.add(CacheEvent.created(e.getKey(), e.getValue()));
            } else if (was.mzxid != e.getValue().mzxid) {
                arrivals.add(CacheEvent.changed(e.getKey(), was, e.getValue()));
            }
        }
        Comparator<CacheEvent> byDepth = Comparator.comparingInt(ev -> depth(ev.path()));
        deletions.sort(byDepth.reversed().thenComparing(CacheEvent::path));
        arrivals.sort(byDepth.thenComparing(CacheEvent::path));
        List<CacheEvent> events = new ArrayList<>(deletions.size() + arrivals.size());
        events.addAll(deletions);
        events.addAll(arrivals);
        return events;
    }

    /** @return the number of path segments: 0 for {@code /}, 1 for {@code /a}, 2 for {@code /a/b} */
    static int depth(String path) {
        if (path.length() == 1) {
            return 0;
        }
        int n = 0;
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                n++;
            }
        }
        return n;
    }
}
