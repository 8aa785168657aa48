package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
}
