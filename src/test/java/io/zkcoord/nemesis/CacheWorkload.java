package io.zkcoord.nemesis;

import io.zkcoord.cache.CacheListener;
import io.zkcoord.cache.CachedNode;
import io.zkcoord.cache.ZkCache;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

/**
 * A cache following writers: every process writes random creates, data changes and deletes under {@code
 * <dir>/tree} (depths 1 and 2) through its data client, while a cache of that tree, on the workload's own client
 * (the short session the faults expire), records every value it shows ({@code event seen}, token = the node's
 * {@code mzxid}).
 *
 * <p>Every write is a {@code multi} guarded by {@code check(<dir>/open)}: once the nemesis has healed it deletes
 * that node (no write can land after it), then creates {@code <dir>/tree/quiet} and records the tree it reads
 * ({@code final cache-node}). When told to stop, the workload waits until its cache shows {@code quiet}, the last
 * change ever made to the tree, and records what its cache holds ({@code event cache-node}, then {@code event
 * cache-dump}). The {@link Checker} asserts that each dump equals the nemesis's read, and that no cache ever showed
 * a node's value older than one it had shown ({@code mzxid} never goes back).
 *
 * <p>The same check runs after each heal of the schedule ({@link QuietRounds}): round {@code n} closes the writes
 * the same way, creates {@code <dir>/tree/quiet-<n>} and records the tree ({@code round cache-node}, token {@code
 * n}); a watcher thread of the workload records its cache ({@code event round-node}, then {@code event round-dump},
 * token {@code n}) the first time it shows that marker, and the nemesis deletes the marker before it opens the
 * writes again, so a cache showing the marker shows the quiet tree (a process started later never sees it).
 * <ul>
 *   <li>{@code cache}: {@link ZkCache};</li>
 *   <li>{@code naivecache}: {@link NaiveCache}, deliberately broken (no reload after a reconnection or an expiry,
 *       and replies applied by a thread pool in any order): the checker must catch it.</li>
 * </ul>
 */
final class CacheWorkload extends Workload {

    /** Children of the tree's top, each with up to {@value #GRANDCHILDREN} children of its own. */
    private static final int CHILDREN = 6;
    private static final int GRANDCHILDREN = 3;
    static final String QUIET = "quiet";
    /** The marker of quiet round {@code n} is {@code tree/quiet-<n>}. */
    static final String ROUND = "quiet-";

    /** A copy of the tree that records what it shows. */
    interface View extends AutoCloseable {
        /** @return what it holds now: path to {@link #describe} */
        Map<String, String> snapshot();

        @Override
        void close();
    }

    private final String tree;
    private final String open;
    private final View view;
    private final Thread rounds;
    private long written;

    CacheWorkload(String name, Settings settings) {
        super(name, settings);
        this.tree = dir + "/tree";
        this.open = dir + "/open";
        Consumer<String[]> seen = s -> history.record(name, "event", "seen", s[0], Long.parseLong(s[1]),
                sessionOf(client), s[2]);
        this.view = name.equals("naivecache") ? new NaiveCache(client, tree, seen) : zkCache(seen);
        this.rounds = new Thread(this::watchRounds, name + "-rounds");
        rounds.setDaemon(true);
        rounds.start();
    }

    /**
     * Every 50 ms until {@link #finish()}: if the cache shows a round's marker it has not recorded yet, records the
     * copy that shows it (the marker exists only while the tree is quiet).
     */
    private void watchRounds() {
        long recorded = 0;
        try {
            while (!stopping()) {
                Map<String, String> nodes = view.snapshot();
                long round = 0;
                for (String path : nodes.keySet()) {
                    String last = path.substring(path.lastIndexOf('/') + 1);
                    if (path.equals(tree + "/" + last) && last.startsWith(ROUND)) {
                        round = Math.max(round, Long.parseLong(last.substring(ROUND.length())));
                    }
                }
                if (round > recorded) {
                    recorded = round;
                    for (Map.Entry<String, String> e : nodes.entrySet()) {
                        history.record(name, "event", "round-node", e.getKey(), round, 0, e.getValue());
                    }
                    history.record(name, "event", "round-dump", tree, round, 0, "nodes=" + nodes.size());
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            history.record(name, "event", "error", tree, 0, 0, "round watcher: " + e);
        }
    }

    private View zkCache(Consumer<String[]> seen) {
        ZkCache cache = new ZkCache(client, tree);
        cache.addListener(new CacheListener() {
            @Override
            public void created(CachedNode node) {
                show("created", node);
            }

            @Override
            public void changed(CachedNode before, CachedNode after) {
                show("changed", after);
            }

            @Override
            public void deleted(CachedNode before) {
                show("deleted", before);
            }

            private void show(String kind, CachedNode n) {
                seen.accept(new String[] {n.path(), Long.toString(n.stat().getMzxid()),
                        kind + " " + describe(n.stat(), n.data())});
            }
        });
        cache.start();
        return new View() {
            @Override
            public Map<String, String> snapshot() {
                Map<String, String> nodes = new TreeMap<>();
                cache.stream().forEach(n -> nodes.put(n.path(), describe(n.stat(), n.data())));
                return nodes;
            }

            @Override
            public void close() {
                cache.close();
            }
        };
    }

    /** @return the node as the checker compares it: {@code czxid=.. mzxid=.. version=.. data=..} */
    static String describe(Stat stat, byte[] data) {
        return "czxid=" + stat.getCzxid() + " mzxid=" + stat.getMzxid() + " version=" + stat.getVersion() + " data="
                + (data == null || data.length == 0 ? "-" : new String(data, StandardCharsets.UTF_8));
    }

    @Override
    void cycle() throws InterruptedException {
        int child = random.nextInt(CHILDREN);
        String path = tree + "/k" + child + (random.nextInt(3) == 0 ? "/c" + random.nextInt(GRANDCHILDREN) : "");
        int pick = random.nextInt(10);
        byte[] data = (Long.toHexString(random.nextLong()) + "-" + written++).getBytes(StandardCharsets.UTF_8);
        // creates as often as changes, deletes half as often: the tree stays about half full
        Op op = pick < 4 ? Op.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)
                : pick < 8 ? Op.setData(path, data, -1) : Op.delete(path, -1);
        String f = pick < 4 ? "create" : pick < 8 ? "set" : "delete";
        long session = sessionOf(dataClient);
        history.record(name, "invoke", f, path, 0, session, "");
        try {
            dataClient.zooKeeper().multi(List.of(Op.check(open, -1), op));
            history.record(name, "ok", f, path, 0, session, "");
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException e) {
            history.record(name, "info", f, path, 0, session, e.code().name());
        } catch (KeeperException e) {
            history.record(name, "fail", f, path, 0, session, e.code().name());
        } catch (IllegalStateException e) {
            history.record(name, "fail", f, path, 0, session, e.getClass().getSimpleName());
        }
        pace(10, 50);
    }

    @Override
    void finish() {
        // stopping() is already true: the watcher ends within a look (never interrupted: an interrupt during a
        // write would close the history's channel)
        try {
            rounds.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // The nemesis made "quiet" after the last write that could land: a cache showing it has seen them all.
        long deadline = System.nanoTime() + (name.equals("naivecache") ? Duration.ofSeconds(2)
                : Duration.ofSeconds(30)).toNanos();
        Map<String, String> nodes = view.snapshot();
        while (!nodes.containsKey(tree + "/" + QUIET) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            nodes = view.snapshot();
        }
        for (Map.Entry<String, String> e : nodes.entrySet()) {
            history.record(name, "event", "cache-node", e.getKey(), 0, 0, e.getValue());
        }
        history.record(name, "event", "cache-dump", tree, 0, 0, "nodes=" + nodes.size()
                + (nodes.containsKey(tree + "/" + QUIET) ? "" : " quiet-not-seen"));
        view.close();
    }
}
