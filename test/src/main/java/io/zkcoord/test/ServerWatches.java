package io.zkcoord.test;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * The number of watches one in-process server holds, read from its own data tree ({@code
 * DataTree.getWatchCount()}: data and child watches).
 *
 * <p>Not {@code mntr}'s {@code zk_watch_count}: ZooKeeper's metrics are one registry per JVM, so with several
 * servers in one JVM every server reports the gauge of the one registered last. The data tree is reached
 * through curator-test's private fields (checked with curator-test 5.9 on ZooKeeper 3.8 and 3.9); if they
 * change, this fails with a message saying so rather than answering wrong. Stateless.
 */
final class ServerWatches {

    private ServerWatches() {
    }

    /** @return the watches {@code server} holds now; 0 if it is not running */
    static long of(TestingZooKeeperServer server) {
        try {
            Object main = field(server, "main");
            ZooKeeperServer zk = main == null ? null : serverOf(main);
            return zk == null || zk.getZKDatabase() == null ? 0 : zk.getZKDatabase().getDataTree().getWatchCount();
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the watch count of the in-process server " + server
                    + " (curator-test's internals differ from 5.9's)", e);
        }
    }

    /** The serving ZooKeeperServer inside curator's main: a quorum peer's active server, or a standalone's. */
    private static ZooKeeperServer serverOf(Object main) throws ReflectiveOperationException {
        Object peer = fieldOrNull(main, "quorumPeer");
        if (peer != null) { // TestingQuorumPeerMain
            Method active = peer.getClass().getMethod("getActiveServer");
            return (ZooKeeperServer) active.invoke(peer);
        }
        Object embedded = field(main, "zooKeeperEmbedded"); // ZooKeeperServerEmbeddedAdapter
        if (embedded == null) {
            return null;
        }
        Object single = fieldOrNull(embedded, "mainsingle");
        if (single != null) {
            Object factory = field(single, "cnxnFactory");
            return factory == null ? null
                    : (ZooKeeperServer) factory.getClass().getMethod("getZooKeeperServer").invoke(factory);
        }
        Object cluster = fieldOrNull(embedded, "maincluster");
        Object clusterPeer = cluster == null ? null : fieldOrNull(cluster, "quorumPeer");
        return clusterPeer == null ? null
                : (ZooKeeperServer) clusterPeer.getClass().getMethod("getActiveServer").invoke(clusterPeer);
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        for (Class<?> c = owner.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(owner);
            } catch (NoSuchFieldException next) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(owner.getClass().getName() + "." + name);
    }

    private static Object fieldOrNull(Object owner, String name) throws ReflectiveOperationException {
        try {
            return field(owner, name);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }
}
