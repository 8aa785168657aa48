package io.zkcoord.examples.snippets;

// snippet:imports
import io.zkcoord.KeyPaths;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.barrier.ZkBarrier;
import io.zkcoord.barrier.ZkCountDownLatch;
import io.zkcoord.barrier.ZkDoubleBarrier;
import io.zkcoord.cache.CacheListener;
import io.zkcoord.cache.CachedNode;
import io.zkcoord.cache.ZkCache;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.group.Member;
import io.zkcoord.group.ZkGroup;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.shard.ShardListener;
import io.zkcoord.shard.ZkShardMember;
import io.zkcoord.value.Versioned;
import io.zkcoord.value.ZkAtomicLong;
import io.zkcoord.value.ZkSharedValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Op;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
// end:imports

/**
 * The README's recipe examples, one method each. README.md shows the text between each pair of
 * {@code snippet:} and {@code end:} comments verbatim (checked by {@link SnippetText}), and {@link
 * Snippets} runs every method against a real ensemble and checks what it did.
 */
final class Recipes {

    private static final Logger log = LoggerFactory.getLogger(Recipes.class);

    private Recipes() {
    }

    // snippet:mutex
    static long mutex(ZkClient client) {
        ZkMutex mutex = new ZkMutex(client, "/locks/orders");
        mutex.lock();
        try {
            long token = mutex.fencingToken();   // grows with every new hold of the path
            // critical section: every write to the guarded resource carries the token
            return token;
        } finally {
            mutex.unlock();
        }
    }
    // end:mutex

    // snippet:lease
    static void lease(ZkClient client) throws InterruptedException {
        ZkMutex mutex = new ZkMutex(client, "/locks/orders");
        try (ZkLease lease = mutex.acquire()) {   // belongs to the object: any thread may release it
            lease.whenLost().thenRun(() -> log.warn("lost {}", lease.nodePath()));
            // critical section, writes carry lease.fencingToken()
        }
    }
    // end:lease

    // snippet:async
    static void async(ZkClient client) {
        ZkMutex mutex = new ZkMutex(client, "/locks/orders");
        // No thread waits; cancelling the future (or orTimeout) gives up and deletes the node.
        mutex.acquireAsync()
                .orTimeout(5, TimeUnit.SECONDS)
                .thenAccept(lease -> {
                    try (lease) {
                        log.info("holding with token {}", lease.fencingToken());
                    }
                })
                .join();   // keep the client open until the future has completed
    }
    // end:async

    // snippet:try-lock
    static boolean tryLock(ZkClient client) throws InterruptedException {
        ZkLock lock = new ZkMutex(client, "/locks/nightly-export");
        if (!lock.tryLock(2, TimeUnit.SECONDS)) {   // returns within 2 s (+ at most 200 ms), whatever the network does
            return false;
        }
        try {
            return true;
        } finally {
            lock.unlock();
        }
    }
    // end:try-lock

    // snippet:per-key
    static boolean register(ZkClient client, String phoneNumber, Set<String> users) throws InterruptedException {
        ZkLock lock = new ZkMutex(client, KeyPaths.path("/locks/registrations", phoneNumber));
        if (!lock.tryLock(5, TimeUnit.SECONDS)) {
            return false;                      // still busy after 5 s: ask the user to try again
        }
        try {
            return users.add(phoneNumber);     // check and insert: one request per number at a time
        } finally {
            lock.unlock();                     // the last release takes the key's node with it
        }
    }
    // end:per-key

    // snippet:read-write
    static void readWrite(ZkClient client) {
        ZkReadWriteLock rw = new ZkReadWriteLock(client, "/locks/catalog");
        rw.readLock().lock();          // shares with other readers
        try {
            // read the catalog
        } finally {
            rw.readLock().unlock();
        }
        rw.writeLock().lock();         // alone; FIFO with the readers
        try {
            // rewrite the catalog
        } finally {
            rw.writeLock().unlock();
        }
    }
    // end:read-write

    // snippet:multi-lock
    static void transfer(ZkClient client, byte[] debit, byte[] credit) {
        ZkMultiLock both = new ZkMultiLock(client, List.of("/locks/account-42", "/locks/account-17"));
        both.lock();
        try {
            // one fencing token for both paths; the write lands only while every lock node still exists
            both.commitIfHeld(List.of(Op.setData("/accounts/42", debit, -1), Op.setData("/accounts/17", credit, -1)));
        } finally {
            both.unlock();
        }
    }
    // end:multi-lock

    // snippet:semaphore
    static Optional<Long> semaphore(ZkClient client) throws InterruptedException {
        ZkSemaphore slots = new ZkSemaphore(client, "/semaphores/exports", 2);   // at most 2 holders at once
        Optional<ZkLease> lease = slots.tryAcquire(Duration.ofSeconds(5));
        if (lease.isEmpty()) {
            return Optional.empty();   // both permits stayed taken for 5 s
        }
        try (ZkLease held = lease.get()) {
            // at most one other process is in here now
            return Optional.of(held.fencingToken());
        }
    }
    // end:semaphore

    // snippet:election
    static long election(ZkClient client) throws InterruptedException {
        try (ZkLeaderElection election = new ZkLeaderElection(client, "/election/scheduler", "worker-1")) {
            election.addListener(new LeadershipListener() {
                @Override
                public void elected(long epoch) {
                    log.info("leading with epoch {}", epoch);   // fence the leader's writes with it
                }

                @Override
                public void revoked(long epoch, RevokeReason reason) {
                    log.info("stopped leading (epoch {}): {}", epoch, reason);
                }
            });
            election.start();
            if (!election.awaitLeadership(Duration.ofSeconds(30))) {
                return -1;
            }
            return election.epoch();
        }
    }
    // end:election

    // snippet:group
    static List<Member> group(ZkClient client) throws InterruptedException {
        try (ZkGroup workers = new ZkGroup(client, "/groups/workers", "worker-3",
                "10.0.0.7:8080".getBytes(StandardCharsets.UTF_8))) {
            workers.addListener(members -> log.info("{} workers alive: {}", members.size(), members));
            workers.join();                                          // again in every new session, until close()
            return Inspector.group(client, "/groups/workers");       // read from the ensemble, in join order
        }
    }
    // end:group

    // snippet:cache
    static Optional<String> cache(ZkClient client) throws InterruptedException {
        try (ZkCache flags = new ZkCache(client, "/config/flags")) {   // the subtree, on one watch
            flags.addListener(new CacheListener() {
                @Override
                public void changed(CachedNode before, CachedNode after) {
                    log.info("{} is now {}", after.path(), new String(after.data(), StandardCharsets.UTF_8));
                }

                @Override
                public void deleted(CachedNode before) {
                    log.info("{} removed", before.path());
                }
            });
            flags.start();
            if (!flags.awaitInitialized(Duration.ofSeconds(30))) {
                return Optional.empty();
            }
            return flags.get("/config/flags/dark-mode")                 // local: no request
                    .map(node -> new String(node.data(), StandardCharsets.UTF_8));
        }
    }
    // end:cache

    // snippet:shards
    static Set<Integer> shards(ZkClient client) throws InterruptedException {
        try (ZkShardMember member = new ZkShardMember(client, "/shards/invoices", "worker-3", 16)) {
            member.addListener(new ShardListener() {
                @Override
                public void assigned(int shard, long fencingToken) {
                    log.info("start shard {} (token {})", shard, fencingToken);   // fence its writes with the token
                }

                @Override
                public void revoked(int shard, long fencingToken, RevokeReason reason) {
                    log.info("stop shard {}: {}", shard, reason);   // the next owner starts after this returns
                }
            });
            member.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (member.owned().size() < 16 && System.nanoTime() < deadline) {
                Thread.sleep(10);                                    // alone in the group, it gets all 16
            }
            return member.owned();
        }
    }
    // end:shards

    // snippet:counter
    static long counter(ZkClient client) {
        ZkAtomicLong orders = new ZkAtomicLong(client, "/counters/orders");
        return orders.incrementAndGet();   // applied exactly once, or it throws: no "did not succeed" to loop on
    }
    // end:counter

    // snippet:shared-value
    static int sharedValue(ZkClient client) {
        try (ZkSharedValue<Integer> limit = ZkSharedValue.ofInt(client, "/config/limit", 100)) {
            limit.start();                                          // made with 100 if missing
            limit.addListener(v -> log.info("limit now {}", v.value()));
            Versioned<Integer> seen = limit.get();
            if (!limit.trySet(seen, seen.value() + 10)) {           // only if nobody changed it since
                log.info("changed meanwhile, now {}", limit.get().value());
            }
            return limit.get().value();
        }
    }
    // end:shared-value

    // snippet:latch
    static boolean latch(ZkClient client) throws InterruptedException {
        ZkCountDownLatch loaded = new ZkCountDownLatch(client, "/latches/partitions-loaded");
        loaded.trySetCount(3);              // arms a round; false while one is running
        for (int partition = 0; partition < 3; partition++) {
            loaded.countDown();             // each loader once, from any process: counted exactly once
        }
        return loaded.await(Duration.ofSeconds(30));   // every waiter of this round passes at zero
    }
    // end:latch

    // snippet:barrier
    static boolean barrier(ZkClient client) throws InterruptedException {
        ZkBarrier migration = new ZkBarrier(client, "/barriers/schema-migration");
        migration.set();                                           // the migrator holds everyone ...
        CompletableFuture.runAsync(migration::remove);              // ... and lets them all through when done
        return migration.await(Duration.ofSeconds(30));             // a worker: true once it is gone
    }
    // end:barrier

    // snippet:double-barrier
    static boolean doubleBarrier(ZkClient client) throws InterruptedException {
        ZkDoubleBarrier round = new ZkDoubleBarrier(client, "/barriers/load-test", 1);   // 1 member, to run alone
        if (!round.enter(Duration.ofSeconds(30))) {   // start together once all members are in
            return false;                             // nobody else came: our node is already removed
        }
        // the work of the round
        return round.leave(Duration.ofSeconds(30));   // finish together once all have left
    }
    // end:double-barrier

    // snippet:inspect
    static QueueSnapshot inspect(ZkClient client) throws InterruptedException {
        QueueSnapshot s = Inspector.inspect(client, "/locks/nightly-export");
        for (QueueSnapshot.Entry e : s.entries()) {
            log.info("{} {} pid {} since {}, token {}", e.holding() ? "HOLDS" : "waits", e.ownerHost(),
                    e.ownerPid(), e.created(), e.fencingToken());
        }
        return s;
    }
    // end:inspect
}
