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

    Map<Integer, String> read() throws InterruptedException {
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
            Map<Long, String> memberBySession = members();
            Map<Integer, String> owners = new TreeMap<>();
            if (!heads.isEmpty()) {
                List<OpResult> headResults = client.call(path, zk -> zk.multi(heads));
                for (int i = 0; i < heads.size(); i++) {
                    if (headResults.get(i) instanceof OpResult.GetDataResult r) {
                        String owner = memberBySession.get(r.getStat().getEphemeralOwner());
                        if (owner != null) {
                            owners.put(heldShards.get(i), owner);
                        }
                    }
                }
            }
            return Collections.unmodifiableMap(owners);
        } catch (KeeperException e) {
            throw new io.zkcoord.CoordinationException("cannot read the owners of " + path + ": " + e.getMessage(), e);
        }
    }

    private Map<Long, String> members() throws KeeperException, InterruptedException {
        String dir = path + "/members";
        List<String> children;
        try {
            children = client.call(dir, zk -> zk.getChildren(dir, false));
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        }
        List<Op> reads = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (String child : children) {
            io.zkcoord.group.ZkGroup.memberIdOf(child).ifPresent(id -> {
                ids.add(id);
                reads.add(Op.getData(dir + "/" + child));
            });
        }
        Map<Long, String> bySession = new HashMap<>();
        if (!reads.isEmpty()) {
            List<OpResult> results = client.call(dir, zk -> zk.multi(reads));
            for (int i = 0; i < reads.size(); i++) {
                if (results.get(i) instanceof OpResult.GetDataResult r) {
                    bySession.put(r.getStat().getEphemeralOwner(), ids.get(i));
                }
            }
        }
        return bySession;
    }
}
