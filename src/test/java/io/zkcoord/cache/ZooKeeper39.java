package io.zkcoord.cache;

import org.apache.zookeeper.Watcher.WatcherType;

/**
 * Whether the ZooKeeper client on the class path can remove a persistent recursive watch (3.9 and
 * later), which {@link ZkCache} needs: the cache tests run only then, and on a 3.8 client ({@code
 * -Dzookeeper.version=3.8.x}) are reported as disabled with the reason, where the cache itself throws
 * {@link UnsupportedOperationException} (checked by {@code ZooKeeperVersionTest}).
 */
public final class ZooKeeper39 {

    /** Names the limitation in a disabled test's report. */
    public static final String REASON = "ZkCache needs the ZooKeeper 3.9 client (3.8 cannot remove a persistent recursive watch)";

    private ZooKeeper39() {
    }

    /** @return true if this class path's ZooKeeper client is 3.9 or later */
    public static boolean onClassPath() {
        for (WatcherType type : WatcherType.values()) {
            if (type.name().equals("PersistentRecursive")) {
                return true;
            }
        }
        return false;
    }
}
