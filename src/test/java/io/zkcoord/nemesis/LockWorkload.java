package io.zkcoord.nemesis;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import java.time.Duration;
import java.util.Optional;

/**
 * The workloads that take a hold and write the guarded register while holding it. One cycle: {@code acquire}
 * (invoke, then ok with the lease's token, or fail), one to three increments of the register, {@code release}.
 * A lease lost with its session is recorded as {@code event lost} when the library says so.
 * <ul>
 *   <li>{@code mutex}: {@link ZkMutex}, register {@link Register.Guard#FENCED};</li>
 *   <li>{@code rwlock}: {@link ZkReadWriteLock}, half the cycles read holds (no write), half write holds
 *       (fenced);</li>
 *   <li>{@code semaphore}: {@link ZkSemaphore} of {@value Workload#PERMITS} permits, no register;</li>
 *   <li>{@code guarded}: {@link ZkMutex}, writes by {@code commitIfHeld} and no token compare;</li>
 *   <li>{@code unlocked}: no lock at all (a token from the clock), blind writes: must be caught by the checker;</li>
 *   <li>{@code unfenced}: {@link ZkMutex}, writes compare no token: a paused holder's late write lands, which the
 *       checker must catch.</li>
 * </ul>
 * Register writes go through the workload's data client (a long session of its own), so a holder resumed after its
 * lock session expired still reaches the register and the resource's token compare is what refuses it.
 */
final class LockWorkload extends Workload {

    private static final Duration ACQUIRE_WAIT = Duration.ofSeconds(5);
    /** The writes of one {@code unfenced} hold. */
    private static final int UNFENCED_WRITES = 20;

    private final String lockPath;
    private final String register;
    private final ZkMutex mutex;
    private final ZkReadWriteLock rw;
    private final ZkSemaphore semaphore;
    private final boolean unfenced;

    LockWorkload(String name, Settings settings) {
        super(name, settings);
        this.lockPath = dir + "/lock";
        this.register = dir + "/register";
        this.mutex = switch (name) {
            case "mutex", "guarded", "unfenced" -> new ZkMutex(client, lockPath);
            default -> null;
        };
        this.rw = name.equals("rwlock") ? new ZkReadWriteLock(client, lockPath) : null;
        this.semaphore = name.equals("semaphore") ? new ZkSemaphore(client, lockPath, PERMITS) : null;
        this.unfenced = name.equals("unfenced");
    }

    @Override
    void cycle() throws InterruptedException {
        String mode;
        ZkLock lock = null;
        if (rw != null) {
            boolean write = random.nextBoolean();
            mode = write ? "write" : "read";
            lock = write ? rw.writeLock() : rw.readLock();
        } else if (semaphore != null) {
            mode = "permits=" + PERMITS;
        } else {
            mode = "exclusive";
            lock = mutex;
        }
        long session = sessionOf(client);
        history.record(name, "invoke", "acquire", lockPath, 0, session, mode);
        ZkLease lease = null;
        long token;
        if (name.equals("unlocked")) {
            token = System.nanoTime(); // no lock: a token that merely grows
        } else {
            Optional<ZkLease> granted;
            try {
                granted = semaphore != null ? semaphore.tryAcquire(ACQUIRE_WAIT) : lock.tryAcquire(ACQUIRE_WAIT);
            } catch (CoordinationException | IllegalStateException e) {
                history.record(name, "fail", "acquire", lockPath, 0, session, e.getClass().getSimpleName());
                pace(100, 300);
                return;
            }
            if (granted.isEmpty()) {
                history.record(name, "fail", "acquire", lockPath, 0, session, "timeout");
                return;
            }
            lease = granted.get();
            token = lease.fencingToken();
            session = sessionOf(client);
        }
        history.record(name, "ok", "acquire", lockPath, token, session, mode);
        if (lease != null) {
            long t = token;
            long s = session;
            lease.whenLost().thenRun(() -> history.record(name, "event", "lost", lockPath, t, s, ""));
        }
        try {
            int writes = mode.equals("exclusive") || mode.equals("write") ? 1 + random.nextInt(3) : 0;
            if (unfenced) {
                // The hold is mostly waits each followed by a write, and long (about a second): a holder paused
                // in it nearly always has writes left, which land over its successor's once it resumes.
                writes = UNFENCED_WRITES;
            }
            for (int i = 0; i < writes && !stopping(); i++) {
                pace(10, 80);
                Register.increment(dataClient.zooKeeper(), history, name,
                        register, token, session, guard(), lease);
            }
            if (!unfenced) {
                pace(10, 100);
            }
        } finally {
            history.record(name, "invoke", "release", lockPath, token, session, mode);
            if (lease != null) {
                lease.release();
            }
            history.record(name, "ok", "release", lockPath, token, session, mode);
        }
        pace(0, 50);
    }

    private Register.Guard guard() {
        return switch (name) {
            case "guarded" -> Register.Guard.GUARDED_COMMIT;
            case "unfenced" -> Register.Guard.UNFENCED;
            case "unlocked" -> Register.Guard.BLIND;
            default -> Register.Guard.FENCED;
        };
    }

}
