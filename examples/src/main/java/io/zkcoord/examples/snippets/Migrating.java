package io.zkcoord.examples.snippets;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import java.time.Duration;
import java.util.Optional;

/**
 * docs/migrating-from-curator.md's examples: a service moving off Apache Curator, before and after
 * the last step of a rolling migration. {@link Snippets} runs them against a real ensemble.
 */
final class Migrating {

    private Migrating() {
    }

    // snippet:mutex
    /** Step 2: the path Curator's InterProcessMutex uses, shared with the Curator processes still running. */
    static long exportOrders(ZkClient client) throws InterruptedException {
        ZkMutex mutex = new ZkMutex(client, "/locks/orders", Protocol.CURATOR);
        Optional<ZkLease> lease = mutex.tryAcquire(Duration.ofSeconds(30)); // was: acquire(30, SECONDS)
        if (lease.isEmpty()) {
            return -1; // as Curator's false: not held within the time
        }
        try (ZkLease held = lease.get()) {
            // new: the resource refuses writes whose token is below the highest it has seen
            return held.fencingToken();
        }
    }
    // end:mutex

    // snippet:read-write
    /** InterProcessReadWriteLock's path: readers of both libraries share, writers wait for everyone. */
    static void readCatalog(ZkClient client) {
        ZkReadWriteLock rw = new ZkReadWriteLock(client, "/locks/catalog", Protocol.CURATOR);
        rw.readLock().lock();
        try {
            // read
        } finally {
            rw.readLock().unlock();
        }
    }
    // end:read-write

    // snippet:election
    /** LeaderLatch's path, with its participant id: exactly one leader among latches and these. */
    static ZkLeaderElection joinScheduler(ZkClient client, String participantId) {
        ZkLeaderElection election = new ZkLeaderElection(client, "/elections/scheduler", participantId,
                Protocol.CURATOR);
        election.start();
        return election;
    }
    // end:election

    // snippet:selector-election
    /** LeaderSelector's path (not a latch's): exactly one leader among selectors and these. */
    static ZkLeaderElection joinReporter(ZkClient client, String participantId) {
        ZkLeaderElection election = ZkLeaderElection.sharingWithLeaderSelector(client, "/elections/reporter",
                participantId);
        election.start();
        return election;
    }
    // end:selector-election

    // snippet:last-step
    /** Step 3, once no Curator process is left: the default protocol, on the same path. */
    static long exportOrdersAfterMigration(ZkClient client) throws InterruptedException {
        ZkMutex mutex = new ZkMutex(client, "/locks/orders"); // Protocol.ZKCOORD
        try (ZkLease held = mutex.acquire()) {
            return held.fencingToken();
        }
    }
    // end:last-step
}
