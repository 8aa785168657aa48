package io.zkcoord.shedlock;

import io.zkcoord.CoordinationException;
import io.zkcoord.KeyPaths;
import io.zkcoord.ZkClient;
import io.zkcoord.internal.Reachability;
import io.zkcoord.shedlock.ZkcoordSimpleLock.Grant;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.common.PathUtils;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ShedLock's lock provider on zkcoord: one persistent znode per lock name under {@code rootPath},
 * whose expiry is decided in the ensemble's time.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(ZkClient client) {
 *     return new ZkcoordLockProvider(client, "/shedlock");
 * }
 *
 * @Scheduled(cron = "0 * * * * *")
 * @SchedulerLock(name = "report", lockAtMostFor = "PT10M", lockAtLeastFor = "PT30S")
 * void report() { ... }
 * }</pre>
 *
 * <h2>Semantics (ShedLock's)</h2>
 * <ul>
 *   <li>{@link #lock(LockConfiguration)} returns a lock, or empty if the name is held (by any
 *       process, this provider included). A lock outlives the death of its holder until {@code
 *       lockAtMostFor}: a job whose machine died is not re-run at once.
 *   <li>{@code unlock()} keeps the lock until {@code lockAtLeastFor} after it was taken.
 *   <li>{@code extend(lockAtMostFor, lockAtLeastFor)} returns a new lock; see {@link ZkcoordSimpleLock}.
 * </ul>
 *
 * <h2>Time</h2>
 * Only the durations of a {@link LockConfiguration} are read, never its {@code createdAt} or any
 * clock of this machine: every expiry is computed from the {@code mtime} that the ZooKeeper leader
 * stamps on each write, and compared with the {@code mtime} of a write made for that purpose (the
 * provider writes {@code rootPath}'s data, which nothing reads, to learn the ensemble's "now"). A
 * client whose clock is hours off neither steals a live lock nor keeps an expired one. If
 * leadership moves to a server whose clock differs by d, locks taken under the old leader expire
 * d earlier (new clock ahead) or later (behind); keep the servers' clocks synchronized (NTP).
 *
 * <h2>Fencing</h2>
 * Every write to a lock node is conditional on the version its writer last saw: a holder whose
 * lock expired and was taken by another cannot unlock or extend the other's lock. Each lock has a
 * fencing token ({@link ZkcoordSimpleLock#fencingToken()}, or {@link #fencingToken(String)} from
 * inside a job): the {@code mzxid} of the write that took it, strictly increasing from holder to holder.
 *
 * <h2>Costs</h2>
 * Taking a free, never-used name: one create. Taking a used name: the create that finds it, a
 * read, a write to learn the ensemble's time, and the conditional write. Finding it held: the
 * create, the read and the time write. Unlock and extend: one conditional write.
 *
 * <h2>While ZooKeeper is unreachable</h2>
 * {@link #lock(LockConfiguration)} does not hold the scheduler's thread for the client's retry
 * policy, and logs no stack trace per run. While the client is not connected it waits for a
 * connection at most the client's {@linkplain ZkClient#connectionTimeout() connection timeout}
 * (not at all once a call of this provider has waited that long in vain in the same outage), then
 * returns empty: the run is skipped, since a lock that cannot be checked is not taken. One WARN line
 * per outage says that ZooKeeper is unreachable, one INFO line when it is back; each skipped run is
 * logged at DEBUG. A connection lost in the middle of a call ends the same way once the retry policy
 * gives up (one WARN line). {@code unlock()} follows the same rule: while ZooKeeper is unreachable
 * it logs one WARN line and leaves the lock to expire at {@code lockAtMostFor}.
 *
 * <p>Calls are synchronous and run under the client's retry policy. A retried write whose first
 * reply was lost is recognized by the attempt id stored in the node. Thread-safe.
 */
public final class ZkcoordLockProvider implements ExtensibleLockProvider {

    private static final Logger log = LoggerFactory.getLogger(ZkcoordLockProvider.class);
    private static final byte[] EMPTY = new byte[0];

    private final ZkClient client;
    private final String rootPath;
    private final String owner;
    /** The locks this provider holds, by name, for {@link #fencingToken(String)}. */
    private final Map<String, ZkcoordSimpleLock> held = new ConcurrentHashMap<>();
    private final Reachability reachability;

    /**
     * @param client the client whose ensemble keeps the locks (lock nodes are persistent: they do
     *     not depend on its session)
     * @param rootPath the directory of the lock nodes, e.g. {@code /shedlock}; created on demand;
     *     not {@code /}
     * @throws IllegalArgumentException if {@code client} is null, or {@code rootPath} is null,
     *     {@code /}, not absolute, ends with {@code /} or has characters ZooKeeper rejects
     * @throws IllegalStateException if {@code client} is closed
     */
    public ZkcoordLockProvider(ZkClient client, String rootPath) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (rootPath == null || rootPath.equals("/")) {
            throw new IllegalArgumentException("rootPath must be a directory below /, was " + rootPath);
        }
        try {
            PathUtils.validatePath(rootPath);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rootPath '" + rootPath + "' is not a valid ZooKeeper path: "
                    + e.getMessage(), e);
        }
        this.client = client;
        this.rootPath = rootPath;
        this.owner = describeProcess();
        this.reachability = new Reachability(client, log, "ShedLock runs are skipped");
    }

    /**
     * Takes the lock of {@code lockConfiguration.getName()} for {@code lockAtMostFor}, unless it is
     * held. Blocks for a few ZooKeeper round trips, never for another holder; while the client is
     * not connected, for the client's connection timeout at most (see the class comment).
     *
     * @return the lock, or empty if another holder's lock (or this provider's) has not expired, or
     *     if ZooKeeper is unreachable (the run is skipped)
     * @throws IllegalArgumentException if {@code lockConfiguration} is null
     * @throws CoordinationException if ZooKeeper refuses a request (an ACL, for instance), or the
     *     thread is interrupted
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        if (lockConfiguration == null) {
            throw new IllegalArgumentException("lockConfiguration must not be null");
        }
        String name = lockConfiguration.getName();
        String path = KeyPaths.path(rootPath, name);
        LockRecord mine = LockRecord.locked(UUID.randomUUID().toString(), lockConfiguration.getLockAtMostFor().toMillis(),
                lockConfiguration.getLockAtLeastFor().toMillis(), owner);
        if (unreachable(name).isPresent()) {
            return Optional.empty();
        }
        Optional<Grant> grant;
        try {
            grant = call(path, zk -> take(zk, path, mine));
        } catch (CoordinationException e) {
            if (!isConnectionFailure(e)) {
                throw e;
            }
            log.warn("lock {} not taken, the run is skipped: {}", name, e.getMessage());
            return Optional.empty();
        }
        return grant.map(g -> {
            ZkcoordSimpleLock lock = new ZkcoordSimpleLock(this, name, g);
            held.put(name, lock);
            log.debug("locked {} with token {}", name, g.token());
            return lock;
        });
    }

    /**
     * The fencing token of the lock this provider holds on {@code name} (taken and neither unlocked
     * nor given up); for a job run under {@code @SchedulerLock}, which never sees its lock object.
     *
     * @return the token, or empty if this provider holds no lock on {@code name}
     */
    public OptionalLong fencingToken(String name) {
        ZkcoordSimpleLock lock = held.get(name);
        return lock == null ? OptionalLong.empty() : OptionalLong.of(lock.fencingToken());
    }

    @Override
    public String toString() {
        return "ZkcoordLockProvider[" + rootPath + " on " + client + "]";
    }

    /**
     * The lock protocol:
     * <ol>
     *   <li>create the node with our record: done if it did not exist (its {@code mtime} is the lock time);
     *   <li>else read it; if it holds our own attempt id, a lost reply hid our success;
     *   <li>learn the ensemble's now from a write of our own ({@code rootPath}'s {@code mtime});
     *   <li>not expired yet: held by another, give up;
     *   <li>expired: overwrite it, conditional on the version read in step 2; losing that race means
     *       another contender took it first.
     * </ol>
     */
    private Optional<Grant> take(ZooKeeper zk, String path, LockRecord mine) throws KeeperException, InterruptedException {
        Stat created = new Stat();
        try {
            zk.create(path, mine.bytes(), aclFor(path), CreateMode.PERSISTENT, created);
            return Optional.of(grant(path, created, mine, created.getMzxid()));
        } catch (KeeperException.NoNodeException e) {
            createRoot(zk);
            return take(zk, path, mine);
        } catch (KeeperException.NodeExistsException e) {
            // held or used before: decide below
        }
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData(path, false, stat);
        } catch (KeeperException.NoNodeException e) {
            return take(zk, path, mine);
        }
        Optional<LockRecord> current = LockRecord.parse(data);
        if (current.isPresent() && current.get().holder().equals(mine.holder())) {
            return Optional.of(grant(path, stat, mine, stat.getMzxid()));
        }
        long expiry = current.map(r -> r.expiry(stat.getMtime())).orElse(stat.getMtime());
        if (current.isEmpty()) {
            log.warn("{} holds no lock record; taking it over", path);
        }
        if (ensembleNow(zk) < expiry) {
            return Optional.empty();
        }
        try {
            Stat taken = zk.setData(path, mine.bytes(), stat.getVersion());
            return Optional.of(grant(path, taken, mine, taken.getMzxid()));
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            return ownWrite(zk, path, mine).map(s -> grant(path, s, mine, s.getMzxid()));
        }
    }

    void unlock(ZkcoordSimpleLock lock) {
        held.remove(lock.name(), lock);
        Grant grant = lock.grant();
        LockRecord unlocked = grant.record().unlocked(grant.lockedAtMillis() + grant.record().lockAtLeastForMillis());
        Optional<String> down = unreachable(lock.name());
        if (down.isPresent()) {
            log.warn("{} not unlocked, it stays until lockAtMostFor: {}", lock, down.get());
            return;
        }
        boolean done;
        try {
            done = call(grant.path(), zk -> {
                try {
                    zk.setData(grant.path(), unlocked.bytes(), grant.version());
                    return true;
                } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                    return ownWrite(zk, grant.path(), unlocked).isPresent();
                }
            });
        } catch (CoordinationException e) {
            if (!isConnectionFailure(e)) {
                throw e;
            }
            log.warn("{} not unlocked, it stays until lockAtMostFor: {}", lock, e.getMessage());
            return;
        }
        if (!done) {
            log.warn("{} had expired and was taken by another holder before its unlock; the other's lock stays", lock);
        }
    }

    Optional<SimpleLock> extend(ZkcoordSimpleLock lock, Duration lockAtMostFor, Duration lockAtLeastFor) {
        held.remove(lock.name(), lock);
        Grant old = lock.grant();
        LockRecord extended = LockRecord.locked(UUID.randomUUID().toString(), lockAtMostFor.toMillis(),
                lockAtLeastFor.toMillis(), owner);
        long oldExpiry = old.record().expiry(old.lockedAtMillis());
        Optional<Grant> grant = call(old.path(), zk -> {
            Stat stat;
            try {
                stat = zk.setData(old.path(), extended.bytes(), old.version());
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                Optional<Stat> own = ownWrite(zk, old.path(), extended);
                if (own.isEmpty()) {
                    return Optional.empty();
                }
                stat = own.get();
            }
            if (stat.getMtime() >= oldExpiry) {
                // Nobody had taken it (the version matched), but it had expired: an expired lock is
                // not extended. Put back a record that is free since its expiry.
                try {
                    zk.setData(old.path(), old.record().unlocked(oldExpiry).bytes(), stat.getVersion());
                } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                    // already taken by another: nothing of ours to undo
                }
                return Optional.empty();
            }
            return Optional.of(new Grant(old.path(), stat.getVersion(), stat.getMtime(), extended, old.token()));
        });
        return grant.map(g -> {
            ZkcoordSimpleLock next = new ZkcoordSimpleLock(this, lock.name(), g);
            held.put(lock.name(), next);
            return next;
        });
    }

    /** @return the node's stat if it holds {@code record} (our write was applied, its reply lost) */
    private Optional<Stat> ownWrite(ZooKeeper zk, String path, LockRecord record) throws KeeperException, InterruptedException {
        Stat stat = new Stat();
        try {
            Optional<LockRecord> current = LockRecord.parse(zk.getData(path, false, stat));
            return current.filter(record::equals).map(r -> stat);
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** @return the ensemble's current time: the leader's {@code mtime} stamp on a write of {@code rootPath}'s data */
    private long ensembleNow(ZooKeeper zk) throws KeeperException, InterruptedException {
        return zk.setData(rootPath, EMPTY, -1).getMtime();
    }

    private void createRoot(ZooKeeper zk) throws KeeperException, InterruptedException {
        int slash = 0;
        while (slash >= 0) {
            slash = rootPath.indexOf('/', slash + 1);
            String dir = slash < 0 ? rootPath : rootPath.substring(0, slash);
            try {
                zk.create(dir, EMPTY, aclFor(dir), CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // made by someone else, or earlier
            }
        }
    }

    /**
     * @return the client's ACL for the node at {@code path}: its {@code aclProvider}'s answer for
     *     that path, or else its one ACL
     * @throws CoordinationException if the client's ACL provider fails for {@code path}
     */
    private List<ACL> aclFor(String path) {
        try {
            return client.aclFor(path);
        } catch (RuntimeException e) {
            throw new CoordinationException("ShedLock node " + path + ": the client's ACL provider failed: "
                    + e.getMessage(), e);
        }
    }

    private static Grant grant(String path, Stat stat, LockRecord record, long token) {
        return new Grant(path, stat.getVersion(), stat.getMtime(), record, token);
    }

    private <T> T call(String path, ProviderCall<T> call) {
        try {
            return client.call(path, call::run);
        } catch (KeeperException e) {
            throw new CoordinationException("ShedLock node " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while locking " + path, e);
        }
    }

    /** @return the outage that keeps {@code name} from being locked now, if ZooKeeper is unreachable */
    private Optional<String> unreachable(String name) {
        Optional<String> down;
        try {
            down = reachability.unreachable(true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while waiting for ZooKeeper to lock " + name, e);
        }
        down.ifPresent(d -> log.debug("lock {} not taken, the run is skipped: {}", name, d));
        return down;
    }

    /** @return true if the retry policy gave up on a connection (not on an answer of the ensemble) */
    private static boolean isConnectionFailure(CoordinationException e) {
        return e.getCause() instanceof KeeperException.ConnectionLossException
                || e.getCause() instanceof KeeperException.SessionExpiredException
                || e.getCause() instanceof KeeperException.OperationTimeoutException
                || e.getCause() instanceof KeeperException.SessionMovedException;
    }

    static void checkDurations(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        if (lockAtMostFor == null || lockAtLeastFor == null || lockAtMostFor.isNegative() || lockAtLeastFor.isNegative()) {
            throw new IllegalArgumentException("lock " + name + ": durations must be zero or more, were "
                    + lockAtMostFor + " and " + lockAtLeastFor);
        }
        if (lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
            throw new IllegalArgumentException("lock " + name + ": lockAtLeastFor " + lockAtLeastFor
                    + " is longer than lockAtMostFor " + lockAtMostFor);
        }
    }

    private static String describeProcess() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown";
        }
        return host + "/" + ProcessHandle.current().pid();
    }

    @FunctionalInterface
    private interface ProviderCall<T> {
        T run(ZooKeeper zk) throws KeeperException, InterruptedException;
    }
}
