package io.zkcoord.examples.snippets;

// snippet:imports
import io.zkcoord.KeyPaths;
import io.zkcoord.LockLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.shard.ShardListener;
import io.zkcoord.shard.ZkShardMember;
import io.zkcoord.value.Versioned;
import io.zkcoord.value.ZkAtomicLong;
import io.zkcoord.value.ZkSharedValue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
// end:imports

/**
 * The examples of docs/choosing.md, one problem each. The document shows the text between each
 * pair of {@code snippet:} and {@code end:} comments verbatim (checked by {@link SnippetText}), and
 * {@link ChoosingChecks} runs every method against a real ensemble and checks that it does what the
 * document says: a duplicate is refused while the first request holds, a semaphore never lets more
 * in than its permits, a stale holder's write is refused.
 */
final class Choosing {

    private Choosing() {
    }

    // snippet:run-once
    /** @return true if this call ran the export; false if another instance runs it now or ran it that day */
    static boolean nightlyExport(ZkClient client, LocalDate day, LongConsumer export) throws Exception {
        ZkMutex lock = new ZkMutex(client, "/locks/nightly-export");
        Optional<ZkLease> lease = lock.tryAcquire(Duration.ZERO);   // one look; never queues behind a run
        if (lease.isEmpty()) {
            return false;                                          // another instance is running it
        }
        try (ZkLease held = lease.get()) {
            String done = "/jobs/nightly-export/" + day;           // one node per day that ran
            if (client.call(done, zk -> zk.exists(done, false)) != null) {
                return false;                                      // it already ran that day
            }
            export.accept(held.fencingToken());                    // the export's writes carry the token
            createIfMissing(client, "/jobs");
            createIfMissing(client, "/jobs/nightly-export");
            held.commitIfHeld(List.of(Op.create(done, new byte[0], client.aclFor(done), CreateMode.PERSISTENT)));
            return true;                                           // recorded only if the lock still held
        }
    }

    static void createIfMissing(ZkClient client, String path) throws Exception {
        try {
            client.call(path, zk -> zk.create(path, new byte[0], client.aclFor(path), CreateMode.PERSISTENT));
        } catch (KeeperException.NodeExistsException e) {
            // made by an earlier run
        }
    }
    // end:run-once

    // snippet:per-key
    static String register(ZkClient client, String phoneNumber, LongFunction<String> insert)
            throws InterruptedException {
        ZkMutex lock = new ZkMutex(client, KeyPaths.path("/locks/registrations", phoneNumber));
        Optional<ZkLease> lease = lock.tryAcquire(Duration.ZERO);   // one look, at most 780 ms
        if (lease.isEmpty()) {
            return "409 a request for " + phoneNumber + " is in progress";
        }
        try (ZkLease held = lease.get()) {
            return insert.apply(held.fencingToken());   // the table's unique key refuses a later repeat
        }                                               // release: the key's nodes are deleted
    }
    // end:per-key

    // snippet:semaphore
    /** @return the work's result, or empty if all 3 permits stayed taken for {@code maxWait} */
    static <T> Optional<T> convertVideo(ZkClient client, Duration maxWait, Supplier<T> work)
            throws InterruptedException {
        ZkSemaphore converters = new ZkSemaphore(client, "/semaphores/video-converters", 3);
        Optional<ZkLease> permit = converters.tryAcquire(maxWait);   // FIFO with every other process
        if (permit.isEmpty()) {
            return Optional.empty();
        }
        try (ZkLease held = permit.get()) {
            return Optional.of(work.get());                          // at most 3 of these at once, fleet-wide
        }
    }
    // end:semaphore

    /** What an instance does while it leads: started with the epoch, stopped on any revocation. */
    interface Duty {
        void start(long epoch);

        void stop();
    }

    // snippet:election
    static ZkLeaderElection billingScheduler(ZkClient client, String instanceId, Duty duty) {
        ZkLeaderElection election = new ZkLeaderElection(client, "/election/billing-scheduler", instanceId);
        election.addListener(new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                duty.start(epoch);        // fence the leader's writes with the epoch
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                duty.stop();              // SUSPENDED, LOST or CLOSED: stop at once
            }
        });
        election.start();                 // returns at once; leadership comes to the listener
        return election;                  // close() on shutdown: the next instance leads at once
    }
    // end:election

    // snippet:shards
    static ZkShardMember payoutWorker(ZkClient client, String workerId, ShardListener work) {
        ZkShardMember member = new ZkShardMember(client, "/shards/payouts", workerId, 8);
        member.addListener(work);         // assigned(shard, token), revoked(shard, token, reason)
        member.start();                   // every worker of the path splits shards 0..7
        return member;                    // close(): its shards go to the others
    }

    /** The shard of an account: every worker computes the same. */
    static int shardOf(String accountId) {
        return Math.floorMod(accountId.hashCode(), 8);
    }
    // end:shards

    // snippet:fenced-update
    /** @return false if a holder with a newer token wrote first: this one lost its lock */
    static boolean saveReport(Connection db, String id, String body, long fencingToken) throws SQLException {
        try (PreparedStatement update = db.prepareStatement(
                "UPDATE reports SET body = ?, fencing_token = ? WHERE id = ? AND fencing_token <= ?")) {
            update.setString(1, body);
            update.setLong(2, fencingToken);
            update.setString(3, id);
            update.setLong(4, fencingToken);
            return update.executeUpdate() == 1;   // one statement: the check and the write are atomic
        }
    }
    // end:fenced-update

    // snippet:shared-value
    static ZkSharedValue<Long> rateLimit(ZkClient client, LongConsumer apply) {
        ZkSharedValue<Long> limit = ZkSharedValue.ofLong(client, "/config/rate-limit", 100);   // 100 if missing
        limit.addListener(v -> apply.accept(v.value()));   // the value read at start, then every newer one
        limit.start();                                     // makes the node if missing, reads it, watches it
        return limit;                                      // close() when done: removes the watch
    }

    /** @return false if another instance changed the limit first: nothing written, get() shows theirs */
    static boolean raise(ZkSharedValue<Long> limit, long by) {
        Versioned<Long> seen = limit.get();
        return limit.trySet(seen, seen.value() + by);      // only if the node is still at seen's version
    }

    static long nextInvoiceNumber(ZkClient client) {
        return new ZkAtomicLong(client, "/counters/invoice-number").incrementAndGet();   // exactly once, or it throws
    }
    // end:shared-value

    // snippet:guarded-commit
    /** @return false if the lease was lost: nothing was written */
    static boolean publishPrices(ZkLease lease, byte[] prices) {
        try {
            lease.commitIfHeld(List.of(Op.setData("/config/prices", prices, -1)));   // checked by the server
            return true;
        } catch (LockLostException e) {
            return false;                 // its node is gone: another process may hold the lock now
        }                                 // CommitOutcomeUnknownException: the reply was lost; read to know
    }
    // end:guarded-commit
}
