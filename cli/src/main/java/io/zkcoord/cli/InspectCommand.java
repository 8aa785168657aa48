package io.zkcoord.cli;

import io.zkcoord.ZkClient;
import io.zkcoord.group.Member;
import io.zkcoord.group.ZkGroup;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.shard.ShardSnapshot;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code zkcoord inspect}: who holds a queue directory, since when, and who waits. */
@Command(name = "inspect", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Shows who holds the lock (semaphore, election, ...) at PATH, since when, and who waits, in queue order.",
            "Works for every zkcoord recipe's directory; two ZooKeeper reads whatever the queue length.",
            "A group's directory (ZkGroup) shows its members; a shard path (ZkShardMember) its members, the shards",
            "each owns now with their tokens, and the shards the coordinator assigned to each.",
            "Says so when PATH does not exist (nothing holds or waits there: the locks delete an idle lock's "
                + "directory), and when it is not a lock directory (a parent of lock directories, say).",
            "Reads only: a chroot at the end of --connect that does not exist is reported missing, not created."
        })
final class InspectCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(index = "0", paramLabel = "PATH", description = "The lock's path, e.g. /locks/nightly-export.")
    String path;

    @Option(names = "--json", description = "Print the snapshot as JSON instead of a table.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        connection.require();
        PathArgument.check("PATH", path);
        String text;
        try (ZkClient client = connection.openReadOnly()) {
            text = describe(client);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(text);
        out.flush();
        return ExitStatus.OK;
    }

    /**
     * A shard path (it has an {@code assignment} node) shows its members and owners; a group's
     * directory (only member nodes) its members; anything else the queue snapshot.
     */
    private String describe(ZkClient client) throws InterruptedException {
        ShardSnapshot shards = Inspector.shards(client, path);
        if (shards.shards() > 0) {
            return json ? MembershipFormat.shardJson(shards) : MembershipFormat.shardTable(shards);
        }
        QueueSnapshot snapshot = Inspector.inspect(client, path);
        if (!snapshot.exists()) {
            String missingChroot = missingChroot(client);
            return json ? SnapshotFormat.json(snapshot, missingChroot) : SnapshotFormat.table(snapshot, missingChroot);
        }
        boolean group = snapshot.exists() && !snapshot.notQueueNodes().isEmpty() && !snapshot.isQueueDirectory()
                && snapshot.notQueueNodes().stream().allMatch(e -> ZkGroup.memberIdOf(e.nodeName()).isPresent());
        if (group) {
            List<Member> members = Inspector.group(client, path);
            return json ? MembershipFormat.groupJson(path, members) : MembershipFormat.groupTable(path, members);
        }
        return json ? SnapshotFormat.json(snapshot) : SnapshotFormat.table(snapshot);
    }

    /**
     * One {@code exists} of the client's root, asked only for a path that does not exist: the
     * client is built not to create its chroot, so a mistyped one is still missing here.
     *
     * @return the connect string's chroot if it does not exist; empty if it does, or there is none
     */
    private static String missingChroot(ZkClient client) throws InterruptedException {
        String connect = client.connectString();
        int slash = connect.indexOf('/');
        String chroot = slash < 0 ? "" : connect.substring(slash);
        if (chroot.isEmpty() || chroot.equals("/")) {
            return "";
        }
        try {
            return client.call("/", zk -> zk.exists("/", false)) == null ? chroot : "";
        } catch (org.apache.zookeeper.KeeperException e) {
            throw new io.zkcoord.CoordinationException("cannot read the chroot " + chroot + ": " + e.getMessage(), e);
        }
    }
}
