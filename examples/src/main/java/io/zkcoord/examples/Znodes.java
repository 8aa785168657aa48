package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import java.nio.charset.StandardCharsets;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZKUtil;

/** The few znode operations the demos share, each safe to retry under the client's policy. */
final class Znodes {

    private Znodes() {
    }

    /** Deletes {@code path} and everything under it, if it exists (a previous run's leftovers). */
    static void deleteTree(ZkClient client, String path) throws Exception {
        client.call(path, zk -> {
            if (zk.exists(path, false) != null) {
                ZKUtil.deleteRecursive(zk, path);
            }
            return null;
        });
    }

    /** Creates a node unless it exists; a retried create that finds its own node is fine. */
    static void create(ZkClient client, String path, String data, CreateMode mode) throws Exception {
        client.call(path, zk -> {
            try {
                return zk.create(path, data.getBytes(StandardCharsets.UTF_8), client.aclFor(path), mode);
            } catch (KeeperException.NodeExistsException e) {
                return path;
            }
        });
    }

    static int readInt(ZkClient client, String path) throws Exception {
        byte[] data = client.call(path, zk -> zk.getData(path, false, null));
        return Integer.parseInt(new String(data, StandardCharsets.UTF_8).trim());
    }

    /** A plain write, version -1: it overwrites whatever is there. */
    static void writeInt(ZkClient client, String path, int value) throws Exception {
        byte[] data = Integer.toString(value).getBytes(StandardCharsets.UTF_8);
        client.call(path, zk -> zk.setData(path, data, -1));
    }
}
