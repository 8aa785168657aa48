package io.zkcoord.nemesis;

import io.zkcoord.ZkClient;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * A deliberately broken cache, for the nemesis's checker to catch: one persistent recursive watch on the session
 * it starts in and one load, then a read per event on a pool of threads that apply their replies in whatever
 * order they finish. It never reloads: whatever changes while it is disconnected, or after its session expired
 * (its watch went with it), it never learns. Not for use: the test of the checker only.
 */
final class NaiveCache implements CacheWorkload.View {

    private final ZooKeeper zk;
    private final String top;
    private final Consumer<String[]> seen;
    private final ExecutorService readers = Executors.newFixedThreadPool(4);
    private final Map<String, String> nodes = new TreeMap<>();

    NaiveCache(ZkClient client, String top, Consumer<String[]> seen) {
        this.zk = client.zooKeeper();
        this.top = top;
        this.seen = seen;
        Watcher watcher = this::event;
        try {
            zk.addWatch(top, watcher, AddWatchMode.PERSISTENT_RECURSIVE);
            load(top);
        } catch (KeeperException e) {
            // the load is short: whatever it missed, it misses (that is the bug under test)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void load(String path) throws KeeperException, InterruptedException {
        read(path);
        List<String> children;
        try {
            children = zk.getChildren(path, false);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        for (String c : children) {
            load(path + "/" + c);
        }
    }

    private void event(WatchedEvent event) {
        if (event.getPath() == null || event.getType() == Watcher.Event.EventType.None) {
            return;
        }
        readers.execute(() -> {
            try {
                read(event.getPath());
            } catch (KeeperException e) {
                // lost: never read again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private void read(String path) throws KeeperException, InterruptedException {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData(path, false, stat);
        } catch (KeeperException.NoNodeException e) {
            String before;
            synchronized (this) {
                before = nodes.remove(path);
            }
            if (before != null) {
                seen.accept(new String[] {path, "0", "deleted " + before});
            }
            return;
        }
        String now = CacheWorkload.describe(stat, data);
        synchronized (this) {
            nodes.put(path, now);
        }
        seen.accept(new String[] {path, Long.toString(stat.getMzxid()), "changed " + now});
    }

    @Override
    public synchronized Map<String, String> snapshot() {
        return new TreeMap<>(nodes);
    }

    @Override
    public void close() {
        readers.shutdownNow();
        try {
            zk.removeAllWatches(top, Watcher.WatcherType.Any, true);
        } catch (KeeperException e) {
            // closing anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
