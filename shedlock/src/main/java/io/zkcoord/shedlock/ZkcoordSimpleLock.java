package io.zkcoord.shedlock;

import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A lock granted by {@link ZkcoordLockProvider}: ShedLock's {@link SimpleLock}, with the fencing
 * token of the acquisition.
 *
 * <ul>
 *   <li>{@link #unlock()} keeps the lock until {@code lockAtLeastFor} after it was taken (or last
 *       extended), in the ensemble's time. It is fenced: if the lock had expired and another took
 *       it, the other's lock stays in place (logged as a warning).
 *   <li>{@link #extend(Duration, Duration)} returns a new lock held until {@code lockAtMostFor}
 *       from now (the ensemble's now), or empty if this one had expired. Fenced as unlock.
 *   <li>After {@code unlock()} or {@code extend(...)}, both throw {@link IllegalStateException}.
 * </ul>
 *
 * <p>Both make synchronous ZooKeeper calls under the client's retry policy. While ZooKeeper is
 * unreachable (see {@link ZkcoordLockProvider}), {@code unlock()} logs one WARN line instead of
 * throwing; {@code extend} throws {@link io.zkcoord.CoordinationException} when the policy gives
 * up. Either way the lock then still counts as unlocked or extended by this object, and expires by
 * itself at its {@code lockAtMostFor}.
 *
 * <p>Thread-safe.
 */
public final class ZkcoordSimpleLock implements SimpleLock {

    private final ZkcoordLockProvider provider;
    private final String name;
    private final Grant grant;
    private boolean valid = true;

    ZkcoordSimpleLock(ZkcoordLockProvider provider, String name, Grant grant) {
        this.provider = provider;
        this.name = name;
        this.grant = grant;
    }

    /**
     * @throws IllegalStateException if this lock was already unlocked or extended
     */
    @Override
    public void unlock() {
        invalidate();
        provider.unlock(this);
    }

    /**
     * @return the new lock, or empty if this one had expired (its {@code lockAtMostFor} passed in
     *     the ensemble's time) or was taken by another
     * @throws IllegalStateException if this lock was already unlocked or extended
     * @throws IllegalArgumentException if a duration is null or negative, or {@code lockAtLeastFor}
     *     is longer than {@code lockAtMostFor}; this lock then stays valid
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        ZkcoordLockProvider.checkDurations(name, lockAtMostFor, lockAtLeastFor);
        invalidate();
        return provider.extend(this, lockAtMostFor, lockAtLeastFor);
    }

    /**
     * The fencing token of this lock: the {@code mzxid} of the write that took it (extensions keep
     * it). Tokens strictly increase from each holder of a name to the next; pass it with every write
     * to the guarded resource, which refuses tokens lower than the highest it has seen.
     */
    public long fencingToken() {
        return grant.token();
    }

    /** @return the lock's name, as in {@code @SchedulerLock(name = ...)} */
    public String name() {
        return name;
    }

    Grant grant() {
        return grant;
    }

    private synchronized void invalidate() {
        if (!valid) {
            throw new IllegalStateException("lock " + name + " is not valid: it was already unlocked or extended");
        }
        valid = false;
    }

    @Override
    public String toString() {
        return "ZkcoordSimpleLock[" + name + ", token " + grant.token() + "]";
    }

    /**
     * What a lock write told its writer: the node's version after it (to fence the next write),
     * its {@code mtime} (the ensemble's time of the lock or extension), the record written and the
     * fencing token.
     */
    record Grant(String path, int version, long lockedAtMillis, LockRecord record, long token) {
    }
}
