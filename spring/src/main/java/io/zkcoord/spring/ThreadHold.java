package io.zkcoord.spring;

import io.zkcoord.ZkLease;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * One thread's hold of a {@link ZkcoordLock}: the lease that holds the ZooKeeper node, the
 * reentrancy count, and the time to live with the timers that end or renew it. Every mutable field
 * is guarded by the owning {@link ZkcoordLock}'s monitor; nothing here blocks.
 */
final class ThreadHold {

    final Thread owner;
    final ZkLease lease;

    /** Reentrant acquisitions not yet matched by an {@code unlock()}. */
    int count = 1;
    /** The time to live, or null for a hold bounded only by its session. */
    Duration ttl;
    /** Ends the hold when the ttl passes; null without a ttl. */
    ScheduledFuture<?> expiry;
    /** Counts the expiries scheduled; a firing timer whose round is not the latest was overtaken by a renewal. */
    long expiryRound;
    /** The renewal task on the user's TaskScheduler; null without one. */
    ScheduledFuture<?> renewal;
    /** Why the hold ended without its owner's unlock, or null while it holds. */
    HoldLossListener.Cause ended;
    /** True once the owner's last {@code unlock()} released it. */
    boolean released;
    /**
     * The ended hold this one was granted over (its owner had not yet unlocked it as often as it
     * acquired): it is the owner's hold again once this one is released, so that each {@code
     * unlock()} it still owes throws as before. Null if there was none.
     */
    ThreadHold below;
    /** Completes once the ended hold's node is deleted (or the attempt to delete it returned). */
    final CompletableFuture<Void> gone = new CompletableFuture<>();

    ThreadHold(Thread owner, ZkLease lease, Duration ttl) {
        this.owner = owner;
        this.lease = lease;
        this.ttl = ttl;
    }

    /**
     * Puts this hold, ended or about to be replaced, under {@code next}: the unlocks it still owes
     * (and those of the ended hold under it, counted in) come after {@code next}'s.
     */
    void under(ThreadHold next) {
        if (below != null) {
            count += below.count;
            below = null;
        }
        next.below = this;
    }

    /** @return true while neither released nor ended, as far as this JVM knows */
    boolean live() {
        return !released && ended == null;
    }

    void cancelTimers() {
        if (expiry != null) {
            expiry.cancel(false);
            expiry = null;
        }
        if (renewal != null) {
            renewal.cancel(false);
            renewal = null;
        }
    }
}
