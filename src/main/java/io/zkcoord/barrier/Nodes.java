package io.zkcoord.barrier;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/** The blocking node steps of the barriers, under the client's retry policy. Stateless. */
final class Nodes {

    private Nodes() {
    }

    /** Makes {@code path} (and its parents) with {@code mode}; true if made, false if it existed. */
    static boolean create(ZkClient client, String path, CreateMode mode) {
        return call(client, path, () -> {
            for (int i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) {
                String parent = path.substring(0, i);
                try {
                    client.call(parent, zk -> zk.create(parent, new byte[0], client.aclFor(parent), CreateMode.PERSISTENT));
                } catch (KeeperException.NodeExistsException e) {
                    // there already
                }
            }
            try {
                client.call(path, zk -> zk.create(path, new byte[0], client.aclFor(path), mode));
                return true;
            } catch (KeeperException.NodeExistsException e) {
                return false;
            }
        });
    }

    /** Deletes {@code path} if it exists; true if it was deleted by this call. */
    static boolean delete(ZkClient client, String path) {
        return call(client, path, () -> {
            try {
                client.call(path, zk -> {
                    zk.delete(path, -1);
                    return null;
                });
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
    }

    /** @return the children of {@code path}; empty if it is missing */
    static List<String> children(ZkClient client, String path) {
        return call(client, path, () -> {
            try {
                return client.call(path, zk -> zk.getChildren(path, false));
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
        });
    }

    interface Step<T> {
        T run() throws KeeperException, InterruptedException;
    }

    static <T> T call(ZkClient client, String path, Step<T> step) {
        try {
            return step.run();
        } catch (KeeperException e) {
            throw new CoordinationException("cannot complete a step on " + path + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted on " + path, e);
        }
    }
}
