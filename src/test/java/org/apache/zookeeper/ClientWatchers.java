package org.apache.zookeeper;

import java.util.Map;
import java.util.Set;

/**
 * Counts the watchers a {@link ZooKeeper} handle holds on the client side: every registered
 * {@link Watcher} object, summed over paths, for data, exist and child watches. The server keeps
 * one watch per path and session whatever this number; the client keeps each object it was given
 * until the watch fires or the session ends, which is what a leak of abandoned waits grows.
 *
 * <p>In ZooKeeper's package because the handle's watch manager is package-private; tests only.
 */
public final class ClientWatchers {

    private ClientWatchers() {
    }

    /** @return the watcher objects registered in {@code zooKeeper}'s client, all kinds together */
    public static int count(ZooKeeper zooKeeper) {
        ZKWatchManager manager = zooKeeper.getWatchManager();
        return sum(manager.getDataWatches()) + sum(manager.getExistWatches()) + sum(manager.getChildWatches());
    }

    private static int sum(Map<String, Set<Watcher>> watches) {
        synchronized (watches) {
            int n = 0;
            for (Set<Watcher> set : watches.values()) {
                n += set.size();
            }
            return n;
        }
    }
}
