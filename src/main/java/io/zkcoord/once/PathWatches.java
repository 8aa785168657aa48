package io.zkcoord.once;

import io.zkcoord.internal.ClientServices;
import java.util.HashMap;
import java.util.Map;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many watchers of one client (shared values, latch and barrier waits) watch each path, so
 * that the last one to leave removes the watch from the server.
 *
 * <p>Why: ZooKeeper's {@code removeWatches(path, watcher, ...)} only checks on the server that the
 * watch exists and drops the watcher object on the client; the server keeps its one watch per
 * path and session until it fires. Only {@code removeAllWatches} removes it there, and it takes
 * every watcher of the path with it: so it is sent only when no other watcher of this client
 * still watches the path.
 *
 * <p>Thread-safe.
 */
public final class PathWatches {

    private static final Logger log = LoggerFactory.getLogger(PathWatches.class);

    // Guarded by this.
    private final Map<String, Integer> counts = new HashMap<>();

    private PathWatches() {
    }

    /** @return the client's table */
    public static PathWatches of(ClientServices services) {
        return services.shared(PathWatches.class, PathWatches::new);
    }

    /** Counts one more watcher of {@code path}; call before its first request with a watch. */
    public synchronized void join(String path) {
        counts.merge(path, 1, Integer::sum);
    }

    /**
     * Counts one watcher of {@code path} fewer. If its watch may still be set, removes it: from
     * the server if this was the path's last watcher of the client, else only on the client.
     *
     * @param zk the handle of the session that set the watch
     * @param watcher the leaving watcher
     * @param watchMayBeSet false if its watch fired (nothing to remove)
     * @param removed run when the removal is answered, or at once if nothing is sent
     */
    public void leave(ZooKeeper zk, String path, Watcher watcher, boolean watchMayBeSet, Runnable removed) {
        boolean last;
        synchronized (this) {
            Integer n = counts.get(path);
            last = n == null || n <= 1;
            if (last) {
                counts.remove(path);
            } else {
                counts.put(path, n - 1);
            }
        }
        if (!watchMayBeSet || zk == null) {
            removed.run();
            return;
        }
        try {
            if (last) {
                zk.removeAllWatches(path, Watcher.WatcherType.Any, false, (rc, p, ctx) -> removed.run(), null);
            } else {
                zk.removeWatches(path, watcher, Watcher.WatcherType.Any, true, (rc, p, ctx) -> removed.run(), null);
            }
        } catch (RuntimeException e) {
            log.debug("{}: watch not removed ({}); it goes when it fires or with the session", path, e.toString());
            removed.run();
        }
    }
}
