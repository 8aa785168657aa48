package io.zkcoord.cache;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The cache's copy of the subtree: nested child maps under the top node, changed only through
 * {@link TreeDiff} events, so that what the listeners hear is exactly what was applied.
 *
 * <p>Always a tree: a node is held only while its parent is (the top excepted). Thread-safe: reads
 * share a read lock, changes take the write lock; neither is held while a listener runs.
 */
final class CacheTree {

    private final String top;
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    /** The top node, or null while it does not exist (or is not known yet). Guarded by {@link #lock}. */
    private HeldNode topNode;
    private int size;

    /** @param top the cache's path, already validated */
    CacheTree(String top) {
        this.top = top;
    }

    /** @return true if {@code path} is the top or below it */
    boolean inScope(String path) {
        return path.equals(top) || path.startsWith(top.equals("/") ? "/" : top + "/");
    }

    /** @return the depth of {@code path} below the top (0 for the top); {@code path} must be in scope */
    int depthBelowTop(String path) {
        return TreeDiff.depth(path) - TreeDiff.depth(top);
    }

    /** @return the node held at {@code path}, or null */
    HeldNode get(String path) {
        lock.readLock().lock();
        try {
            return find(path);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** @return the children held under {@code path}, by name, sorted; a copy, empty if none */
    SortedMap<String, HeldNode> children(String path) {
        lock.readLock().lock();
        try {
            HeldNode node = find(path);
            return node == null || node.children == null ? new TreeMap<>() : new TreeMap<>(node.children);
        } finally {
            lock.readLock().unlock();
        }
    }

    int size() {
        lock.readLock().lock();
        try {
            return size;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** @return every node held, by path, parents before children (a copy) */
    Map<String, HeldNode> all() {
        lock.readLock().lock();
        try {
            return subtree(top);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Makes the copy equal to {@code snapshot} (a whole load).
     *
     * @param snapshot every node read, by path; a tree
     * @return the events applied, in order
     */
    List<CacheEvent> replaceAll(Map<String, HeldNode> snapshot) {
        lock.writeLock().lock();
        try {
            List<CacheEvent> events = TreeDiff.between(subtree(top), snapshot);
            apply(events);
            return events;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Takes in one read of one node.
     *
     * <p>A node read whose parent is not held is dropped: its parent was made after the parent's last
     * read, so the parent's creation was reported by the watch, and so was the node's own creation
     * (after the parent's), and both reads are still to come, the parent's first.
     *
     * @param path the node's path, in scope
     * @param read the node as read, or null if it does not exist
     * @return the events applied, in order; empty if nothing changed
     */
    List<CacheEvent> update(String path, HeldNode read) {
        lock.writeLock().lock();
        try {
            HeldNode held = find(path);
            Map<String, HeldNode> before;
            Map<String, HeldNode> after = new LinkedHashMap<>();
            if (read != null) {
                if (held == null && !path.equals(top) && find(parentOf(path)) == null) {
                    return List.of();
                }
                after.put(path, read);
            }
            if (held == null) {
                before = Map.of();
            } else if (read != null && held.sameLife(read)) {
                if (read.mzxid == held.mzxid) {
                    return List.of();
                }
                before = Map.of(path, held);
            } else {
                before = subtree(path); // gone, or a new life: its descendants go first
            }
            List<CacheEvent> events = TreeDiff.between(before, after);
            apply(events);
            return events;
        } finally {
            lock.writeLock().unlock();
        }
    }

    // ------------------------------------------------------------------ under the lock

    private void apply(List<CacheEvent> events) {
        for (CacheEvent e : events) {
            switch (e.kind()) {
                case CREATED -> put(e.path(), e.after(), null);
                case CHANGED -> put(e.path(), e.after(), find(e.path()).children);
                case DELETED -> remove(e.path());
                default -> throw new IllegalStateException(e.toString());
            }
        }
    }

    private void put(String path, HeldNode node, TreeMap<String, HeldNode> children) {
        node.children = children;
        if (path.equals(top)) {
            if (topNode == null) {
                size++;
            }
            topNode = node;
            return;
        }
        HeldNode parent = find(parentOf(path));
        if (parent == null) {
            throw new IllegalStateException("no parent held for " + path);
        }
        if (parent.children == null) {
            parent.children = new TreeMap<>();
        }
        if (parent.children.put(nameOf(path), node) == null) {
            size++;
        }
    }

    private void remove(String path) {
        HeldNode gone;
        if (path.equals(top)) {
            gone = topNode;
            topNode = null;
        } else {
            HeldNode parent = find(parentOf(path));
            gone = parent == null || parent.children == null ? null : parent.children.remove(nameOf(path));
            if (parent != null && parent.children != null && parent.children.isEmpty()) {
                parent.children = null;
            }
        }
        if (gone != null) {
            size--;
            if (gone.children != null && !gone.children.isEmpty()) {
                throw new IllegalStateException("deleted " + path + " before its children");
            }
        }
    }

    private HeldNode find(String path) {
        if (path.equals(top)) {
            return topNode;
        }
        if (!inScope(path)) {
            return null;
        }
        HeldNode node = topNode;
        int start = top.equals("/") ? 1 : top.length() + 1;
        while (node != null) {
            int slash = path.indexOf('/', start);
            String name = slash < 0 ? path.substring(start) : path.substring(start, slash);
            node = node.children == null ? null : node.children.get(name);
            if (slash < 0) {
                return node;
            }
            start = slash + 1;
        }
        return null;
    }

    /** @return {@code path} and every node held below it, parents first */
    private Map<String, HeldNode> subtree(String path) {
        Map<String, HeldNode> out = new LinkedHashMap<>();
        HeldNode start = find(path);
        if (start == null) {
            return out;
        }
        Deque<Map.Entry<String, HeldNode>> queue = new ArrayDeque<>();
        queue.add(Map.entry(path, start));
        while (!queue.isEmpty()) {
            Map.Entry<String, HeldNode> e = queue.poll();
            out.put(e.getKey(), e.getValue());
            if (e.getValue().children != null) {
                for (Map.Entry<String, HeldNode> c : e.getValue().children.entrySet()) {
                    queue.add(Map.entry(childOf(e.getKey(), c.getKey()), c.getValue()));
                }
            }
        }
        return out;
    }

    static String childOf(String parent, String name) {
        return parent.equals("/") ? "/" + name : parent + "/" + name;
    }

    static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash == 0 ? "/" : path.substring(0, slash);
    }

    private static String nameOf(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** @return every path held, for diagnostics */
    List<String> paths() {
        return new ArrayList<>(all().keySet());
    }
}
