package io.zkcoord.nemesis;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.LockLostException;
import io.zkcoord.ZkLease;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The guarded data of a workload: a znode whose data is {@code count=N token=T}, the number of increments applied
 * and the token of the last writer. A holder increments it by reading it and writing {@code count=N+1
 * token=mine} with a versioned {@code setData} (or inside a guarded commit), so a write is applied only on top of
 * what was read: no increment is lost and every applied write records the token it overwrote.
 *
 * <p>How a write is guarded is the workload's choice ({@link Guard}); every outcome goes to the history as a
 * {@code write} operation: {@code ok} with {@code count=N prev=T}, {@code fail} with why ({@code stale}: refused
 * because the register carries a higher token; {@code lost}: the server refused a guarded commit), {@code info}
 * when the reply was lost (the increment may or may not have been applied).
 */
final class Register {

    /** How a write is protected against a holder that lost its hold. */
    enum Guard {
        /** The resource compares tokens: refused if the register carries a higher one (versioned, atomic). */
        FENCED,
        /** The server checks the hold's node: {@code commitIfHeld} of the versioned write, no token compare. */
        GUARDED_COMMIT,
        /** No protection at all, but versioned: a stale holder's write lands. For the checker's own test. */
        UNFENCED,
        /** Not even versioned: concurrent increments are lost. For the checker's own test. */
        BLIND
    }

    private static final int MAX_ATTEMPTS = 5;

    private Register() {
    }

    static byte[] initial() {
        return "count=0 token=0".getBytes(StandardCharsets.UTF_8);
    }

    /**
     * One increment with {@code token}; records the write's invoke and outcome.
     *
     * @param lease the hold, for {@link Guard#GUARDED_COMMIT} (else may be null)
     */
    static void increment(ZooKeeper zk, History.Writer history, String workload, String path, long token, long session,
            Guard guard, ZkLease lease) throws InterruptedException {
        history.record(workload, "invoke", "write", path, token, session, guard.name());
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Stat stat = new Stat();
            long count;
            long prev;
            try {
                String data = new String(zk.getData(path, false, stat), StandardCharsets.UTF_8);
                count = Long.parseLong(field(data, "count"));
                prev = Long.parseLong(field(data, "token"));
            } catch (KeeperException e) {
                history.record(workload, "fail", "write", path, token, session, "read " + e.code());
                return;
            }
            if (guard == Guard.FENCED && prev > token) {
                history.record(workload, "fail", "write", path, token, session, "stale prev=" + prev);
                return;
            }
            byte[] next = ("count=" + (count + 1) + " token=" + token).getBytes(StandardCharsets.UTF_8);
            int version = guard == Guard.BLIND ? -1 : stat.getVersion();
            String applied = "count=" + (count + 1) + " prev=" + prev;
            try {
                if (guard == Guard.GUARDED_COMMIT) {
                    lease.commitIfHeld(List.of(Op.setData(path, next, version)));
                } else {
                    zk.setData(path, next, version);
                }
                history.record(workload, "ok", "write", path, token, session, applied);
                return;
            } catch (KeeperException.BadVersionException e) {
                continue; // someone wrote in between: read again
            } catch (KeeperException.ConnectionLossException e) {
                history.record(workload, "info", "write", path, token, session, "unknown " + applied);
                return;
            } catch (KeeperException e) {
                history.record(workload, "fail", "write", path, token, session, e.code().toString());
                return;
            } catch (CommitOutcomeUnknownException e) {
                history.record(workload, "info", "write", path, token, session, "unknown " + applied);
                return;
            } catch (LockLostException e) {
                history.record(workload, "fail", "write", path, token, session,
                        (prev > token ? "stale " : "") + "lost prev=" + prev);
                return;
            } catch (CoordinationException e) {
                if (e.getCause() instanceof KeeperException.BadVersionException) {
                    continue;
                }
                history.record(workload, "fail", "write", path, token, session, e.getClass().getSimpleName());
                return;
            }
        }
        history.record(workload, "fail", "write", path, token, session, "contended");
    }

    /** {@code key}'s value in register data {@code count=N token=T}. */
    static String field(String data, String key) {
        for (String word : data.trim().split(" ")) {
            if (word.startsWith(key + "=")) {
                return word.substring(key.length() + 1);
            }
        }
        throw new IllegalArgumentException("no " + key + " in register data '" + data + "'");
    }
}
