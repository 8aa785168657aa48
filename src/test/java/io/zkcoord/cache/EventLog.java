package io.zkcoord.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A listener that records what it hears, checks the promises about how it is called (one call at a
 * time, never on ZooKeeper's event thread), and replays its events over an empty map.
 */
final class EventLog implements CacheListener {

    /** One call heard. */
    record Heard(String kind, String path, CachedNode before, CachedNode after) {
        @Override
        public String toString() {
            return kind + " " + path;
        }
    }

    private final List<Heard> heard = new ArrayList<>();
    private final AtomicInteger inside = new AtomicInteger();
    private final List<String> violations = new ArrayList<>();
    private int initialized;

    @Override
    public void created(CachedNode node) {
        record(new Heard("created", node.path(), null, node));
    }

    @Override
    public void changed(CachedNode before, CachedNode after) {
        record(new Heard("changed", after.path(), before, after));
    }

    @Override
    public void deleted(CachedNode before) {
        record(new Heard("deleted", before.path(), before, null));
    }

    @Override
    public void initialized() {
        record(new Heard("initialized", null, null, null));
    }

    private void record(Heard h) {
        if (inside.incrementAndGet() != 1) {
            violation("two calls at once: " + h);
        }
        String thread = Thread.currentThread().getName();
        if (thread.contains("EventThread")) {
            violation("called on ZooKeeper's event thread " + thread + ": " + h);
        }
        synchronized (this) {
            heard.add(h);
            if (h.kind().equals("initialized")) {
                initialized++;
            }
        }
        inside.decrementAndGet();
    }

    private synchronized void violation(String what) {
        violations.add(what);
    }

    synchronized List<Heard> heard() {
        return new ArrayList<>(heard);
    }

    synchronized List<String> violations() {
        return new ArrayList<>(violations);
    }

    synchronized int initializedCount() {
        return initialized;
    }

    synchronized int size() {
        return heard.size();
    }

    /**
     * Replays every event over an empty map, checking each against the map as it stands (a created
     * path is absent, a changed or deleted one is present with the same czxid, a parent exists when a
     * child is created, and no child remains when a parent is deleted).
     *
     * @return the map: path to (data, czxid, mzxid, version) as the listener would know it
     */
    synchronized Map<String, NodeFacts> replay(String top) {
        Map<String, NodeFacts> map = new HashMap<>();
        for (Heard h : heard) {
            switch (h.kind()) {
                case "created" -> {
                    if (map.containsKey(h.path())) {
                        throw new AssertionError("created twice without a delete: " + h.path());
                    }
                    if (!h.path().equals(top) && !map.containsKey(CacheTree.parentOf(h.path()))) {
                        throw new AssertionError("child created before its parent: " + h.path());
                    }
                    map.put(h.path(), NodeFacts.of(h.after()));
                }
                case "changed" -> {
                    NodeFacts was = map.get(h.path());
                    if (was == null || was.czxid() != h.before().stat().getCzxid()
                            || h.before().stat().getCzxid() != h.after().stat().getCzxid()) {
                        throw new AssertionError("changed without a matching node: " + h.path() + " held " + was);
                    }
                    if (h.after().stat().getMzxid() <= was.mzxid()) {
                        throw new AssertionError("changed to an older or equal mzxid: " + h.path());
                    }
                    map.put(h.path(), NodeFacts.of(h.after()));
                }
                case "deleted" -> {
                    NodeFacts was = map.remove(h.path());
                    if (was == null || was.czxid() != h.before().stat().getCzxid()) {
                        throw new AssertionError("deleted without a matching node: " + h.path());
                    }
                    String prefix = h.path().equals("/") ? "/" : h.path() + "/";
                    for (String p : map.keySet()) {
                        if (p.startsWith(prefix)) {
                            throw new AssertionError("parent " + h.path() + " deleted before its child " + p);
                        }
                    }
                }
                case "initialized" -> { }
                default -> throw new AssertionError(h.toString());
            }
        }
        return map;
    }

    /** What the promise compares of a node. */
    record NodeFacts(String data, long czxid, long mzxid, int version) {
        static NodeFacts of(CachedNode n) {
            byte[] d = n.data();
            return new NodeFacts(d == null ? null : Arrays.toString(d), n.stat().getCzxid(), n.stat().getMzxid(),
                    n.stat().getVersion());
        }

        static NodeFacts of(byte[] data, org.apache.zookeeper.data.Stat stat) {
            return new NodeFacts(data == null ? null : Arrays.toString(data), stat.getCzxid(), stat.getMzxid(),
                    stat.getVersion());
        }
    }
}
