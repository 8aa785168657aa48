package io.zkcoord.examples.fencedjob;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.Optional;

/**
 * A job that may run on one process at a time: it holds a lock and writes its items to a store,
 * each write with the hold's fencing token, so that the store can refuse a holder that lost the lock
 * without knowing yet. It stops when its hold is lost, or when the store refuses a write. Not
 * thread-safe: one thread runs it.
 */
public final class FencedJob {

    /** Where the job writes: refuses a write whose token is older than one it accepted. */
    public interface Store {
        /**
         * @param fencingToken the writer's fencing token
         * @param item what to write
         * @throws IllegalStateException if the token is stale
         */
        void write(long fencingToken, String item);
    }

    /** Why a run ended. */
    public enum Outcome {
        /** Every item was written. */
        DONE,
        /** The lock could not be had in time. */
        NOT_ACQUIRED,
        /** The hold was lost (the session ended): the job stopped before its next write. */
        LOST,
        /** The store refused a write: another holder wrote with a newer token. */
        REFUSED
    }

    private final ZkClient client;
    private final String lockPath;
    private final Store store;

    /**
     * @param client the process's ZooKeeper client
     * @param lockPath the lock that makes the job run once at a time
     * @param store where the items go
     */
    public FencedJob(ZkClient client, String lockPath, Store store) {
        this.client = client;
        this.lockPath = lockPath;
        this.store = store;
    }

    /**
     * Takes the lock (waiting at most {@code maxWait}) and writes {@code items} items.
     *
     * @param items how many items to write
     * @param maxWait how long to wait for the lock
     * @return why the run ended
     * @throws InterruptedException if interrupted while waiting for the lock
     */
    public Outcome run(int items, Duration maxWait) throws InterruptedException {
        Optional<ZkLease> acquired = new ZkMutex(client, lockPath).tryAcquire(maxWait);
        if (acquired.isEmpty()) {
            return Outcome.NOT_ACQUIRED;
        }
        try (ZkLease lease = acquired.get()) {
            for (int i = 0; i < items; i++) {
                if (lease.whenLost().isDone()) {
                    return Outcome.LOST;          // told in time: stop before writing
                }
                try {
                    store.write(lease.fencingToken(), "item-" + i);
                } catch (IllegalStateException stale) {
                    return Outcome.REFUSED;       // not told in time, but the store knew better
                }
            }
            return Outcome.DONE;
        }
    }
}
