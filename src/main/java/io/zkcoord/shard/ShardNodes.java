package io.zkcoord.shard;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.queue.QueueDirectory;
import io.zkcoord.queue.Waits;
import java.util.concurrent.ExecutionException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/** The shard path's assignment node: made once, with the shard count every member must agree on. */
final class ShardNodes {

    private ShardNodes() {
    }

    /**
     * Makes {@code dir} (with missing parents) and its assignment node holding {@code initial}, or
     * reads the assignment node if it exists.
     *
     * @return the assignment now recorded
     * @throws IllegalStateException if the node holds something that is not an assignment
     */
    static ShardAssignment createOrRead(ZkClient client, String dir, String assignmentPath, ShardAssignment initial)
            throws KeeperException, InterruptedException {
        ZkSession session = client.session();
        try {
            new QueueDirectory(client, dir).createDirectory(session).get();
        } catch (ExecutionException e) {
            throw Waits.rethrow(e.getCause());
        }
        try {
            session.call(assignmentPath, zk -> zk.create(assignmentPath, initial.encode(), client.aclFor(assignmentPath), CreateMode.PERSISTENT));
            return initial;
        } catch (KeeperException.NodeExistsException e) {
            return ShardAssignment.decode(session.call(assignmentPath, zk -> zk.getData(assignmentPath, false, null)));
        }
    }
}
