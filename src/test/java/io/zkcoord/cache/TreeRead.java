package io.zkcoord.cache;

import io.zkcoord.cache.EventLog.NodeFacts;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/** A fresh read of a subtree, one synchronous request at a time: what a cache is compared with. */
final class TreeRead {

    private TreeRead() {
    }

    /**
     * @param withData false to leave the data out (a cache built with {@code cacheData(false)})
     * @return every node of the subtree at {@code top} down to {@code maxDepth} below it, by path
     */
    static Map<String, NodeFacts> read(ZooKeeper zk, String top, int maxDepth, boolean withData)
            throws InterruptedException {
        Map<String, NodeFacts> out = new TreeMap<>();
        Deque<Map.Entry<String, Integer>> queue = new ArrayDeque<>();
        queue.add(Map.entry(top, 0));
        while (!queue.isEmpty()) {
            Map.Entry<String, Integer> e = queue.poll();
            String path = e.getKey();
            try {
                Stat stat = new Stat();
                byte[] data = zk.getData(path, false, stat);
                out.put(path, NodeFacts.of(withData ? data : null, stat));
                if (e.getValue() < maxDepth) {
                    for (String child : zk.getChildren(path, false)) {
                        queue.add(Map.entry(CacheTree.childOf(path, child), e.getValue() + 1));
                    }
                }
            } catch (KeeperException.NoNodeException gone) {
                // deleted meanwhile: a quiet tree has none
            } catch (KeeperException ke) {
                throw new AssertionError(ke);
            }
        }
        return out;
    }

    /** @return what the cache holds, in the same form */
    static Map<String, NodeFacts> of(ZkCache cache) {
        Map<String, NodeFacts> out = new TreeMap<>();
        cache.stream().forEach(n -> out.put(n.path(), NodeFacts.of(n)));
        return out;
    }

    /** @return the paths of two maps that differ, for a failure message */
    static String difference(Map<String, NodeFacts> expected, Map<String, NodeFacts> actual) {
        Map<String, String> diff = new HashMap<>();
        expected.forEach((p, f) -> {
            if (!f.equals(actual.get(p))) {
                diff.put(p, "expected " + f + " got " + actual.get(p));
            }
        });
        actual.forEach((p, f) -> {
            if (!expected.containsKey(p)) {
                diff.put(p, "unexpected " + f);
            }
        });
        List<String> lines = diff.entrySet().stream().sorted(Map.Entry.comparingByKey()).limit(20)
                .map(x -> x.getKey() + ": " + x.getValue()).collect(Collectors.toList());
        return diff.size() + " differences, first: " + lines;
    }
}
