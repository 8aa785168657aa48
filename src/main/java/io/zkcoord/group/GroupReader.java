package io.zkcoord.group;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * Reads a group's members from the ensemble, without joining or watching: one {@code getChildren}
 * of the directory and one {@code multi} read of every member's data, whatever their number.
 *
 * <p>Stateless and thread-safe.
 */
public final class GroupReader {

    private GroupReader() {
    }

    /**
     * @param client the client to read with
     * @param path the group's directory
     * @return every member, in join order; empty if the directory does not exist
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws io.zkcoord.NotAuthorizedException at once, without a retry, if the directory's ACL withholds
     *     READ from the client's identities (the message says "not authorized" and names it)
     * @throws CoordinationException if ZooKeeper cannot be reached within the retry policy or refuses the read
     */
    public static List<Member> members(ZkClient client, String path) throws InterruptedException {
        try {
            List<String> children;
            try {
                children = client.call(path, zk -> zk.getChildren(path, false));
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
            List<String> ids = new ArrayList<>();
            List<Op> reads = new ArrayList<>();
            for (String child : children) {
                MemberNames.id(child).ifPresent(id -> {
                    ids.add(id);
                    reads.add(Op.getData(path + "/" + child));
                });
            }
            if (reads.isEmpty()) {
                return List.of();
            }
            List<OpResult> results = client.call(path, zk -> zk.multi(reads));
            record Read(Member member, long czxid) { }
            List<Read> read = new ArrayList<>();
            for (int i = 0; i < reads.size(); i++) {
                if (results.get(i) instanceof OpResult.GetDataResult r) {
                    read.add(new Read(new Member(ids.get(i), r.getData(), r.getStat().getEphemeralOwner()), r.getStat().getCzxid()));
                }
            }
            read.sort(Comparator.comparingLong(Read::czxid));
            return read.stream().map(Read::member).toList();
        } catch (KeeperException.NoAuthException e) {
            throw new io.zkcoord.NotAuthorizedException(e.getPath() != null ? e.getPath() : path,
                    "read it (needs READ)", e);
        } catch (KeeperException e) {
            throw new CoordinationException("cannot read group " + path + ": " + e.getMessage(), e);
        }
    }
}
