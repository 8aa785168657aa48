package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code zkcoord inspect} of paths that are not a lock's queue: missing, or a parent of lock directories. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CliInspectTest extends CliFixture {

    /** A path that does not exist says so (and that this is also how an idle lock looks), as table and JSON. */
    @Test
    void missingPathSaysItDoesNotExist() {
        ZkcoordProcess table = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/never-made");
        assertEquals(0, table.exitStatus(), table.toString());
        assertEquals(1, table.out().lines().count(), table.out());
        assertTrue(table.out().startsWith("/cli/inspect/never-made: does not exist: nothing holds or waits there"),
                table.out());
        assertTrue(table.out().contains("idle lock"), table.out());

        ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/never-made", "--json");
        assertEquals(0, json.exitStatus(), json.toString());
        assertTrue(json.out().contains("\"exists\":false"), json.out());
    }

    /**
     * A mistyped chroot at the end of {@code --connect} is reported missing, as table and JSON
     * (exit 0, as any missing path), and inspecting it creates nothing on the ensemble.
     */
    @Test
    void missingChrootIsReportedMissingNotCreated() throws Exception {
        String chroot = "/cli-inspect-nope";
        String connect = "--connect=" + server.getConnectString() + chroot;
        ZkcoordProcess table = ZkcoordProcess.run(dir, "inspect", connect, "/locks/nightly-export");
        assertEquals(0, table.exitStatus(), table.toString());
        assertEquals(1, table.out().lines().count(), table.out());
        assertTrue(table.out().startsWith("/locks/nightly-export: does not exist: the chroot " + chroot
                + " at the end of the connect string does not exist"), table.out());

        ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect, "/locks/nightly-export", "--json");
        assertEquals(0, json.exitStatus(), json.toString());
        assertTrue(json.out().contains("\"chrootExists\":false,\"exists\":false"), json.out());

        assertNull(observer.zooKeeper().exists(chroot, false), "inspect created the chroot");

        // A chroot that exists: a missing path under it is the usual missing path.
        observer.zooKeeper().create("/cli-inspect-there", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                CreateMode.PERSISTENT);
        ZkcoordProcess there = ZkcoordProcess.run(dir, "inspect", "--connect=" + server.getConnectString()
                + "/cli-inspect-there", "/locks/nightly-export", "--json");
        assertEquals(0, there.exitStatus(), there.toString());
        assertTrue(there.out().contains("\"chrootExists\":true,\"exists\":false"), there.out());
    }

    /**
     * A parent of lock directories is "not a lock directory", with what it holds, never a table of
     * waiters of kind "-"; a lock directory beside foreign children lists only its queue as rows.
     */
    @Test
    void parentOfLockDirectoriesIsNotALockDirectory() throws Exception {
        try (ZkLease a = new ZkMutex(observer, "/cli/inspect/locks/nightly-export").acquire();
                ZkLease b = new ZkMutex(observer, "/cli/inspect/locks/reports").acquire()) {
            assertTrue(a.isValid() && b.isValid(), "both lock directories hold a node");
            ZkcoordProcess table = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/locks");
            assertEquals(0, table.exitStatus(), table.toString());
            List<String> lines = table.out().lines().toList();
            assertEquals(1, lines.size(), table.out());
            assertTrue(lines.get(0).startsWith("/cli/inspect/locks: not a lock directory: it holds 2 nodes that are "
                    + "not queue nodes"), lines.get(0));
            assertTrue(lines.get(0).contains(": nightly-export, reports"), lines.get(0));

            ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/locks", "--json");
            assertEquals(0, json.exitStatus(), json.toString());
            assertTrue(json.out().contains("\"exists\":true,\"lockDirectory\":false,"
                    + "\"notQueueNodes\":[\"nightly-export\",\"reports\"],\"entries\":[]"), json.out());

            ZkcoordProcess lock = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/locks/reports");
            assertEquals(0, lock.exitStatus(), lock.toString());
            assertTrue(lock.out().startsWith("/cli/inspect/locks/reports: 1 holding, 0 waiting"), lock.out());
            assertTrue(lock.out().contains(Long.toString(b.fencingToken())), "decimal token: " + lock.out());
        }
    }

    /** A shard path shows its members and what each owns (decimal tokens); its members' directory shows the group. */
    @Test
    void shardPathAndGroupShowMembersAndOwners() throws Exception {
        try (io.zkcoord.shard.ZkShardMember member = new io.zkcoord.shard.ZkShardMember(observer, "/cli/inspect/shards",
                "worker-1", 4)) {
            member.start();
            await("the only member owns every shard", () -> member.owned().size() == 4);
            ZkcoordProcess shards = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/shards");
            assertEquals(0, shards.exitStatus(), shards.toString());
            assertTrue(shards.out().startsWith("/cli/inspect/shards: 4 shards over 1 member, 4 owned now"), shards.out());
            assertTrue(shards.out().contains("worker-1"), shards.out());
            assertTrue(shards.out().contains("0 (token " + member.token(0).orElseThrow() + ")"), shards.out());

            ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/shards", "--json");
            assertEquals(0, json.exitStatus(), json.toString());
            assertTrue(json.out().contains("{\"shard\":3,\"member\":\"worker-1\",\"fencingToken\":"
                    + member.token(3).orElseThrow() + "}"), json.out());

            ZkcoordProcess group = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/inspect/shards/members");
            assertEquals(0, group.exitStatus(), group.toString());
            assertTrue(group.out().startsWith("/cli/inspect/shards/members: group of 1 member, in join order"), group.out());
            assertTrue(group.out().contains("worker-1"), group.out());
        }
    }
}
