package io.zkcoord.spring;

import io.zkcoord.KeyPaths;
import io.zkcoord.ZkClient;
import io.zkcoord.internal.Reachability;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.common.PathUtils;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * Spring Integration's lock registry on zkcoord: each key is a {@link ZkcoordLock}, a fair,
 * reentrant {@link io.zkcoord.lock.ZkMutex} held by a thread, with an optional time to live and a
 * fencing token. A drop-in for {@code ZookeeperLockRegistry} wherever Spring takes a {@code
 * LockRegistry} ({@code LockRequestHandlerAdvice}, {@code LockRegistryLeaderInitiator}, {@code
 * executeLocked}).
 *
 * <pre>{@code
 * ZkcoordLockRegistry registry = new ZkcoordLockRegistry(client, "/locks");
 * registry.executeLocked("orders/42", () -> ship(order));
 *
 * ZkcoordLock lock = registry.obtain("nightly-export");
 * if (lock.tryLock(Duration.ZERO, Duration.ofMinutes(5))) {     // held for 5 minutes at most
 *     try {
 *         export(lock.fencingToken());
 *         registry.renewLock("nightly-export");                 // 5 more minutes from now
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 *
 * <h2>Keys and paths</h2>
 * {@code obtain(key)} maps {@code key.toString()} to one child of the root path: the characters
 * {@code A-Z a-z 0-9 - _ . ~} stay as they are, every other character becomes the {@code %XX}
 * escapes of its UTF-8 bytes ({@code "orders/42"} is {@code /locks/orders%2F42}, {@code "a b"}
 * is {@code /locks/a%20b}); {@code "."} and {@code ".."} become {@code %2E} and {@code %2E%2E},
 * the empty key {@code %}; a lone surrogate {@code %u} and four hex digits; under the root path
 * {@code "/"}, the key {@code "zookeeper"} is {@code /%7Aookeeper}. Distinct keys never share a path. {@link #path(Object)} tells the path
 * of a key (for {@code zkcoord inspect}).
 *
 * <h2>Lock objects</h2>
 * {@code obtain} returns the same object for a key for as long as the registry keeps it, that is
 * until {@link #expireUnusedOlderThan(long)} drops it. A dropped object that a thread obtained
 * earlier and then acquires takes its key's slot back, unless a later {@code obtain} filled it.
 * Correctness never depends on that identity:
 * two objects for one key exclude each other through ZooKeeper as two processes do.
 *
 * <h2>Time to live and renewal</h2>
 * See {@link ZkcoordLock}. {@link #renewLock(Object)} gives the current thread's hold its own ttl
 * again from now; {@link #renewLock(Object, Duration)} gives it a new one (also to a hold taken with
 * no ttl). With {@link #setRenewalTaskScheduler(TaskScheduler)}, every hold with a ttl is renewed
 * every third of its ttl until unlocked, as Spring's own registries do: a stuck holder then keeps
 * the lock until its session ends, so set it only when holders cannot get stuck.
 *
 * <p>Thread-safe. The registry keeps no ZooKeeper resources of its own: ttl timers run on one
 * shared daemon thread, and closing the {@link ZkClient} ends every hold.
 */
public final class ZkcoordLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    private static final ScheduledExecutorService TIMERS = newTimers();
    private static final ExecutorService ENDINGS = Executors.newCachedThreadPool(daemons("zkcoord-lock-ttl-end"));

    /** The root path of Spring Integration's {@code ZookeeperLockRegistry}. */
    public static final String SPRING_ZOOKEEPER_ROOT = "/SpringIntegration-LockRegistry";

    private final ZkClient client;
    private final String rootPath;
    /** Spring Integration's paths ({@code root/key}, raw) and Curator's protocol, or ours. */
    private final boolean springCompatible;
    private final Map<String, ZkcoordLock> locks = new HashMap<>();
    private volatile TaskScheduler renewalScheduler;
    private final Reachability reachability;

    /**
     * @param client the client whose session holds every lock of this registry
     * @param rootPath the directory of the locks, e.g. {@code /locks}; created on demand
     * @throws IllegalArgumentException if {@code client} is null, or {@code rootPath} is null, not
     *     absolute, ends with {@code /} (other than {@code "/"}), has characters ZooKeeper rejects,
     *     or is {@code /zookeeper} or below it
     * @throws IllegalStateException if {@code client} is closed
     */
    public ZkcoordLockRegistry(ZkClient client, String rootPath) {
        this(client, rootPath, false);
    }

    /**
     * A registry that shares its locks with Spring Integration's {@code ZookeeperLockRegistry}
     * (Curator's {@code InterProcessMutex} on {@code /SpringIntegration-LockRegistry/<key>}), so that
     * a service on Spring's ZooKeeper registry can move to this one in a rolling deploy: each key's
     * lock is a {@link io.zkcoord.lock.ZkMutex} with {@link io.zkcoord.Protocol#CURATOR} on the path
     * Spring's default key-to-path strategy gives, the root path joined to the <em>raw</em> key (no
     * escaping). The key rules are then Spring's: a key is a path below the root, so it must not be
     * empty, start or end with {@code /}, contain {@code //}, {@code .} or {@code ..} segments, or
     * characters ZooKeeper refuses; {@code obtain} refuses such a key with {@link
     * IllegalArgumentException} (Spring's registry would fail later, in ZooKeeper). Two keys that
     * differ only in escaping in the default registry ({@code "a b"}, {@code "a%20b"}) are two paths
     * here too. Once no Spring {@code ZookeeperLockRegistry} is left, keep the paths and switch the
     * protocol with docs/migrating-from-curator.md's last step.
     *
     * @param client the client whose session holds every lock of this registry
     * @return the registry
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static ZkcoordLockRegistry springZookeeperCompatible(ZkClient client) {
        return new ZkcoordLockRegistry(client, SPRING_ZOOKEEPER_ROOT, true);
    }

    private ZkcoordLockRegistry(ZkClient client, String rootPath, boolean springCompatible) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (rootPath == null) {
            throw new IllegalArgumentException("rootPath must not be null");
        }
        try {
            PathUtils.validatePath(rootPath);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rootPath '" + rootPath + "' is not a valid ZooKeeper path: "
                    + e.getMessage(), e);
        }
        if (rootPath.equals("/zookeeper") || rootPath.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("rootPath '" + rootPath + "' is inside ZooKeeper's own /zookeeper subtree");
        }
        this.client = client;
        this.rootPath = rootPath;
        this.springCompatible = springCompatible;
        this.reachability = new Reachability(client, LoggerFactory.getLogger(ZkcoordLockRegistry.class),
                "locks of " + rootPath + " fail at once");
    }

    /**
     * Returns the lock of {@code key}: the same object for as long as the registry keeps it. Makes
     * no ZooKeeper call.
     *
     * @param lockKey any object; its {@code toString()} is the key
     * @throws IllegalArgumentException if {@code lockKey} is null
     */
    @Override
    public ZkcoordLock obtain(Object lockKey) {
        String key = key(lockKey);
        synchronized (locks) {
            return locks.computeIfAbsent(key, k -> new ZkcoordLock(this, k, pathOf(k)));
        }
    }

    /**
     * @return the znode path of {@code lockKey}'s lock (see the class comment for the mapping)
     * @throws IllegalArgumentException if {@code lockKey} is null
     */
    public String path(Object lockKey) {
        return pathOf(key(lockKey));
    }

    private String pathOf(String key) {
        if (!springCompatible) {
            return KeyPaths.path(rootPath, key);
        }
        String path = rootPath + "/" + key;
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("key '" + key + "' does not make a lock path under " + rootPath
                    + " as Spring's ZookeeperLockRegistry maps keys (root + '/' + key): " + e.getMessage(), e);
        }
        if (path.endsWith("/")) {
            throw new IllegalArgumentException("key '" + key + "' must not end with '/'");
        }
        return path;
    }

    /** @return the protocol of this registry's locks */
    io.zkcoord.Protocol protocol() {
        return springCompatible ? io.zkcoord.Protocol.CURATOR : io.zkcoord.Protocol.ZKCOORD;
    }

    /**
     * Drops the locks obtained or released more than {@code age} milliseconds ago that no thread of
     * this JVM holds, waits for, or still has to {@code unlock()} after its hold ended. A later
     * {@code obtain} of a dropped key returns a new object for the same path. Makes no ZooKeeper
     * call: an unused key's directory is a container node that the server removes by itself.
     *
     * @param age in milliseconds; zero or less drops every unused lock
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long cutoff = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(Math.max(0, age));
        synchronized (locks) {
            locks.values().removeIf(lock -> lock.unusedSince(cutoff));
        }
    }

    /**
     * Renews the current thread's hold of {@code lockKey} by its own time to live, from now. A hold
     * taken with no ttl has nothing to renew; the call then only checks that it is held.
     *
     * @throws IllegalStateException if the current thread does not hold the lock, or its hold ended
     * @throws IllegalArgumentException if {@code lockKey} is null
     */
    @Override
    public void renewLock(Object lockKey) {
        held(lockKey).renew(null);
    }

    /**
     * Gives the current thread's hold of {@code lockKey} the time to live {@code ttl}, from now.
     *
     * @throws IllegalStateException if the current thread does not hold the lock, or its hold ended
     * @throws IllegalArgumentException if {@code lockKey} is null, or {@code ttl} is null, zero or negative
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        held(lockKey).renew(ttl);
    }

    /**
     * Renews every hold with a time to live every third of its ttl, on {@code renewalTaskScheduler},
     * until it is unlocked; for holds taken from now on. Null stops renewing later holds.
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        this.renewalScheduler = renewalTaskScheduler;
    }

    @Override
    public String toString() {
        return "ZkcoordLockRegistry[" + rootPath + " on " + client + "]";
    }

    /**
     * Runs {@code step} (which marks {@code lock} in use) under the registry's monitor, first putting
     * {@code lock} back in its key's slot if {@link #expireUnusedOlderThan(long)} dropped it and no
     * other object took the slot: a thread that obtained the object before the drop still finds it
     * through {@code obtain} and {@code renewLock} once it acquires it.
     */
    boolean keep(ZkcoordLock lock, BooleanSupplier step) {
        synchronized (locks) {
            locks.putIfAbsent(lock.key(), lock);
            return step.getAsBoolean();
        }
    }

    ZkClient client() {
        return client;
    }

    Reachability reachability() {
        return reachability;
    }

    TaskScheduler renewalScheduler() {
        return renewalScheduler;
    }

    ScheduledExecutorService timers() {
        return TIMERS;
    }

    ExecutorService endings() {
        return ENDINGS;
    }

    private ZkcoordLock held(Object lockKey) {
        String key = key(lockKey);
        ZkcoordLock lock;
        synchronized (locks) {
            lock = locks.get(key);
        }
        if (lock == null) {
            throw new IllegalStateException(Thread.currentThread().getName() + " does not hold the lock of '" + key
                    + "': the registry has no lock for it");
        }
        return lock;
    }

    private static String key(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lockKey must not be null");
        }
        return lockKey.toString();
    }

    private static ScheduledExecutorService newTimers() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemons("zkcoord-lock-ttl"));
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger ids = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, name + "-" + ids.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
