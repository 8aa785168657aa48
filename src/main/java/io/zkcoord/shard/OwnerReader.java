package io.zkcoord.shard;

import io.zkcoord.ZkClient;
import io.zkcoord.queue.QueueNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * Who owns each shard, as the ensemble says: the session of the first node in each shard's queue,
 * named by the member that session holds. Four reads whatever the number of shards:
 * 1. one multi read of every shard queue;
 * 2. one multi read of the first nodes (their {@code ephemeralOwner});
 * 3. the members' directory, then 4. one multi read of the members (their sessions).
 * A snapshot reads the assignment node too.
 */
final class OwnerReader {

    private final ZkClient client;
    private final String path;
    private final int shards;

    OwnerReader(ZkClient client, String path, int shards) {
        this.client = client;
        this.path = path;
        this.shards = shards;
    }

    /** @return shard to owner id, for every shard whose lock a live member holds */
    Map<Integer, String> read() throws InterruptedException {
        Map<Integer, String> ids = new TreeMap<>();
        snapshot().owners().forEach((shard, owner) -> ids.put(shard, owner.memberId()));
        return Collections.unmodifiableMap(ids);
    }

    /** @return the path's members, target assignment and owners (five reads: the four above and the assignment) */
    ShardSnapshot snapshot() throws InterruptedException {
        try {
            List<Op> queues = new ArrayList<>(shards);
            for (int k = 0; k < shards; k++) {
                queues.add(Op.getChildren(path + "/shard-" + k));
            }
            List<OpResult> queueResults = client.call(path, zk -> zk.multi(queues));
            List<Integer> heldShards = new ArrayList<>();
            List<Op> heads = new ArrayList<>();
            for (int k = 0; k < shards; k++) {
                if (queueResults.get(k) instanceof OpResult.GetChildrenResult r) {
                    List<QueueNode> queue = QueueNode.queue(r.getChildren());
                    if (!queue.isEmpty()) {
                        heldShards.add(k);
                        heads.add(Op.getData(path + "/shard-" + k + "/" + queue.get(0).name()));
                    }
                }
            }
            List<io.zkcoord.group.Member> members = io.zkcoord.group.GroupReader.members(client, path + "/members");
            Map<Long, String> memberBySession = new HashMap<>();
            members.forEach(m -> memberBySession.put(m.sessionId(), m.id()));
            Map<Integer, ShardSnapshot.Owner> owners = new TreeMap<>();
            if (!heads.isEmpty()) {
                List<OpResult> headResults = client.call(path, zk -> zk.multi(heads));
                for (int i = 0; i < heads.size(); i++) {
                    if (headResults.get(i) instanceof OpResult.GetDataResult r) {
                        String owner = memberBySession.get(r.getStat().getEphemeralOwner());
                        if (owner != null) {
                            owners.put(heldShards.get(i), new ShardSnapshot.Owner(owner, r.getStat().getCzxid()));
                        }
                    }
                }
            }
            Map<Integer, String> target = Map.of();
            try {
                String assignment = path + "/assignment";
                target = ShardAssignment.decode(client.call(assignment, zk -> zk.getData(assignment, false, null))).owners();
            } catch (KeeperException.NoNodeException | IllegalStateException e) {
                // no assignment (yet), or not a shard path: no target
            }
            return new ShardSnapshot(path, shards, members, target, owners);
        } catch (KeeperException.NoAuthException e) {
            throw new io.zkcoord.NotAuthorizedException(e.getPath() != null ? e.getPath() : path,
                    "read it (needs READ)", e);
        } catch (KeeperException e) {
            throw new io.zkcoord.CoordinationException("cannot read the owners of " + path + ": " + e.getMessage(), e);
        }
    }
}
