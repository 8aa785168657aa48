package io.zkcoord.shard;

import io.zkcoord.group.Member;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A shard path as read from the ensemble at one moment: its members, the coordinator's target
 * assignment, and who owns each shard now (the holder of its lock).
 *
 * <p>Immutable and thread-safe.
 *
 * @param path the shard path
 * @param shards the number of shards, 0 if the path has no assignment node (not a shard path)
 * @param members the live members, in join order
 * @param target shard to the member the coordinator last gave it to
 * @param owners shard to its owner now; a shard being handed over, or of no live member, is absent
 */
public record ShardSnapshot(String path, int shards, List<Member> members, Map<Integer, String> target,
        Map<Integer, Owner> owners) {

    /**
     * One shard's owner now.
     *
     * @param memberId the owning member's id
     * @param fencingToken the {@code czxid} of its lock node
     */
    public record Owner(String memberId, long fencingToken) {
    }

    /**
     * Reads a shard path from the ensemble: its assignment node (for the shard count and the
     * target), the shard queues in one multi read, their first nodes in one, and the members in
     * two. Nothing is written and no watch is set.
     *
     * @param client the client to read with
     * @param path the shard path, as given to {@link ZkShardMember}
     * @return the snapshot; with {@code shards} 0 and nothing else if the path has no assignment node
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws io.zkcoord.NotAuthorizedException at once, without a retry, if a node's ACL withholds READ
     *     from the client's identities: the message says "not authorized" and names the node
     * @throws io.zkcoord.CoordinationException if ZooKeeper cannot be reached within the retry policy or refuses a read
     */
    public static ShardSnapshot read(io.zkcoord.ZkClient client, String path) throws InterruptedException {
        io.zkcoord.queue.QueuePaths.validate("shard", path);
        String assignment = path + "/assignment";
        ShardAssignment recorded;
        try {
            recorded = ShardAssignment.decode(client.call(assignment, zk -> zk.getData(assignment, false, null)));
        } catch (org.apache.zookeeper.KeeperException.NoNodeException | IllegalStateException e) {
            return new ShardSnapshot(path, 0, List.of(), Map.of(), Map.of());
        } catch (org.apache.zookeeper.KeeperException.NoAuthException e) {
            throw new io.zkcoord.NotAuthorizedException(assignment, "read it (needs READ)", e);
        } catch (org.apache.zookeeper.KeeperException e) {
            throw new io.zkcoord.CoordinationException("cannot read " + assignment + ": " + e.getMessage(), e);
        }
        return new OwnerReader(client, path, recorded.shards()).snapshot();
    }

    /**
     * Copies every collection.
     *
     * @param path the shard path
     * @param shards the number of shards, 0 if not a shard path
     * @param members the live members, in join order
     * @param target shard to target member
     * @param owners shard to owner now
     */
    public ShardSnapshot {
        members = List.copyOf(members);
        target = Collections.unmodifiableMap(new TreeMap<>(target));
        owners = Collections.unmodifiableMap(new TreeMap<>(owners));
    }
}
