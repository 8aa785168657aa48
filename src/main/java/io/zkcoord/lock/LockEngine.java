package io.zkcoord.lock;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.Observer;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.Holder;
import io.zkcoord.observe.Recipe;
import io.zkcoord.queue.Acquisition;
import io.zkcoord.queue.Grant;
import io.zkcoord.queue.Leases;
import io.zkcoord.queue.QueueLease;
import io.zkcoord.queue.QueueDirectory;
import io.zkcoord.queue.QueueNaming;
import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.QueueRule;
import io.zkcoord.queue.QueueSet;
import io.zkcoord.queue.Turn;
import io.zkcoord.queue.Waits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one lock (a mutex, or one side of a read/write lock) over the queue core: thread holds
 * (reentrancy, interrupts, downgrade), leases, and what a session loss means to each. The
 * ZooKeeper protocol is the core's ({@link Acquisition}); the rule is {@link LockRule}.
 *
 * <p>Thread-safe. {@link #holds} maps each holding thread to its {@link Hold}; only that thread adds
 * or removes its entry. Loss is marked on the hold by the session-end hook.
 */
final class LockEngine implements QueueLease.Host {

    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);
    /** The rule of a downgrade: the write hold already excludes everyone, the read node holds at once. */
    private static final QueueRule HELD_AT_ONCE = (queue, own) -> QueueRule.positionOf(queue, own) < 0
            ? Turn.MISSING : Turn.HELD;

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final NodeKind kind;
    /** Every directory of the lock (one, except for a multi-lock). */
    private final QueueSet queues;
    /** The first (for a mutex or a read/write side, the only) directory. */
    private final QueueDirectory queue;
    private final Leases leases;
    /** The recipe this engine runs, as coordination listeners see it. */
    private final Recipe recipe;
    /**
     * What listeners are told a wait or hold is of, one per {@link Holder} (by ordinal): made once,
     * since the lock's paths never change, rather than at every acquisition.
     */
    private final CoordinationEvent[] observedAs;
    private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();
    private final List<LockLossListener> lossListeners = new CopyOnWriteArrayList<>();
    /** The public lock, passed to loss listeners. Set once, before any use. */
    private ZkLock face;
    /** The other side of a read/write lock, or null for a mutex. Set once, before any use. */
    private LockEngine partner;

    LockEngine(ZkClient client, String path, NodeKind kind) {
        this(client, path, kind, QueueNaming.ZKCOORD);
    }

    /** @param naming how the lock names and orders its nodes (its {@link io.zkcoord.Protocol}) */
    LockEngine(ZkClient client, String path, NodeKind kind, QueueNaming naming) {
        this(client, List.of(QueuePaths.validate(kind.recipe(), path)), kind, naming);
    }

    /** @param paths the lock's directories, validated, no two alike (several for a multi-lock) */
    LockEngine(ZkClient client, List<String> paths, NodeKind kind) {
        this(client, paths, kind, QueueNaming.ZKCOORD);
    }

    private LockEngine(ZkClient client, List<String> paths, NodeKind kind, QueueNaming naming) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (naming == null) {
            throw new IllegalArgumentException("protocol must not be null");
        }
        this.client = client;
        this.services = ClientServices.of(client);
        this.path = paths.get(0);
        this.kind = kind;
        List<QueueDirectory> dirs = new ArrayList<>(paths.size());
        for (String p : paths) {
            dirs.add(new QueueDirectory(client, p, naming));
        }
        this.queues = QueueSet.of(dirs);
        this.queue = queues.first();
        this.recipe = switch (kind) {
            case LOCK -> Recipe.MUTEX;
            case READ -> Recipe.READ;
            case WRITE -> Recipe.WRITE;
            case MULTI -> Recipe.MULTI;
        };
        List<String> allPaths = queues.paths();
        Holder[] holders = Holder.values();
        this.observedAs = new CoordinationEvent[holders.length];
        for (Holder h : holders) {
            observedAs[h.ordinal()] = new CoordinationEvent(recipe, allPaths, h);
        }
        this.leases = new Leases(this, kind.prefix(), LockRule.INSTANCE, this::openForLeases);
    }

    /** Leases need an open client, as thread holds do. */
    private CompletableFuture<Void> openForLeases() {
        return client.isClosed()
                ? CompletableFuture.failedFuture(new IllegalStateException("cannot acquire " + describe() + ": "
                        + client + " is closed"))
                : CompletableFuture.completedFuture(null);
    }

    void bind(ZkLock face, LockEngine partner) {
        this.face = face;
        this.partner = partner;
    }

    String path() {
        return path;
    }

    @Override
    public QueueSet queue() {
        return queues;
    }

    // ------------------------------------------------------------------ thread holds

    /**
     * Acquires for the current thread.
     *
     * @param timeoutNanos how long to wait, ZooKeeper calls included; zero or less: one look;
     *     {@link Waits#FOREVER}: no limit
     * @param interruptible whether an interrupt ends the wait
     * @return true if held, false if the time ran out
     */
    boolean acquire(long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + describe());
        }
        ensureOpen();
        Thread me = Thread.currentThread();
        Hold mine = holds.get(me);
        if (mine != null) {
            if (mine.isLost()) {
                throw new IllegalMonitorStateException("the hold of " + describe() + " by " + me.getName()
                        + " was lost with its session; unlock() it before acquiring again");
            }
            mine.count++;
            return true;
        }
        if (kind == NodeKind.WRITE && partner.holds.containsKey(me)) {
            throw new IllegalMonitorStateException(me.getName() + " holds the read lock of " + path
                    + " and asks for the write lock: an upgrade would wait for its own read forever");
        }
        // A thread holding the write lock takes the read lock at once (downgrade).
        Hold downgradeFrom = kind == NodeKind.READ && partner.isHeldBy(me) ? partner.holds.get(me) : null;
        Observer.Wait observed = services.observer().started(observedAs(Holder.THREAD));
        try {
            if (queueUntilHeld(me, downgradeFrom, timeoutNanos, interruptible, observed)) {
                return true;
            }
            observed.timedOut();
            return false;
        } catch (Throwable t) {
            observed.failed(t);
            throw t;
        }
    }

    /** The queueing loop of {@link #acquire}: true once held, false when the time ran out. */
    private boolean queueUntilHeld(Thread me, Hold downgradeFrom, long timeoutNanos, boolean interruptible,
            Observer.Wait observed) throws InterruptedException {
        boolean oneLook = timeoutNanos <= 0;
        long deadline = System.nanoTime() + (oneLook ? Waits.ONE_LOOK_NANOS : Math.min(timeoutNanos, Waits.FOREVER));
        for (;;) {
            boolean downgrade = downgradeFrom != null && !downgradeFrom.isLost();
            Acquisition acquisition = queues.acquire(kind.prefix(), downgrade ? HELD_AT_ONCE : LockRule.INSTANCE,
                    oneLook && !downgrade);
            long wait = timeoutNanos >= Waits.FOREVER ? Waits.FOREVER : deadline - System.nanoTime();
            Grant grant = Waits.await(acquisition, wait, interruptible, this::unwanted);
            if (grant == null) {
                return false;
            }
            // The downgrade is granted only while the write hold's session is the one the read
            // node was made in; a write hold lost meanwhile gives no right to skip the queue.
            if (downgrade && (grant.session() != downgradeFrom.session || downgradeFrom.isLost())) {
                unwanted(grant);
                downgradeFrom = null;
                continue;
            }
            // A downgraded read carries the write hold's token: its own node was created after
            // any writer queued behind the write node, so its czxid would exceed that writer's
            // token, and the resource would refuse the writer once the read hold had written.
            if (grant(me, grant, downgrade ? downgradeFrom.fencingToken : grant.czxid(), observed)) {
                return true;
            }
            // Granted on a session that ended at that moment: the node went with it; queue again.
            ensureOpen();
            if (timeoutNanos < Waits.FOREVER && deadline - System.nanoTime() <= 0) {
                return false;
            }
            log.info("{}: node {} of {} went with its session; queueing again", me.getName(), grant.path(), describe());
        }
    }

    /** A grant nobody will use (interrupted caller, downgrade refused): its node goes in the background. */
    private void unwanted(Grant grant) {
        queues.deleteInBackground(grant);
    }

    /**
     * Records the hold, unless its session ended after the queue said "held": then the node is
     * gone and the caller queues again.
     *
     * @return true if the thread now holds the lock
     */
    private boolean grant(Thread me, Grant grant, long fencingToken, Observer.Wait observed) {
        Hold hold = new Hold(grant.session(), grant.paths(), grant.node(), fencingToken, grant.removableDirs(),
                observed.granting(fencingToken));
        hold.lossHook(grant.session().onEnd(() -> lost(hold)));
        // A handle that stopped (expired, not yet reported by the client) grants nothing.
        if (!grant.session().isAlive() || !hold.grant()) {
            hold.cancelLossHook();
            return false;
        }
        holds.put(me, hold);
        hold.observed.granted();
        if (log.isDebugEnabled()) {
            log.debug("{} holds {} with {} (token {})", me.getName(), describe(), grant.path(), fencingToken);
        }
        return true;
    }

    /** Session-end hook of a hold. */
    private void lost(Hold hold) {
        if (!hold.markLost()) {
            return;
        }
        hold.observed.lost();
        log.warn("hold of {} with {} (token {}) lost: its session {} ended", describe(), hold.nodePath,
                hold.fencingToken, hold.session);
        reportLoss(hold.fencingToken, () -> { });
    }

    /**
     * Tells every loss listener of a lost hold or lease, then runs {@code andThen}, on the
     * client's callback thread; whatever a listener throws is logged and the others are still told.
     */
    @Override
    public void reportLoss(long fencingToken, Runnable andThen) {
        services.userCallbacks().execute(() -> {
            for (LockLossListener l : lossListeners) {
                try {
                    l.lockLost(face, fencingToken);
                } catch (Throwable t) {
                    log.error("loss listener {} of {} failed", l, describe(), t);
                }
            }
            andThen.run();
        });
    }

    /** Releases one hold of the current thread; the last release deletes the node. */
    void release() {
        Thread me = Thread.currentThread();
        Hold hold = holds.get(me);
        if (hold == null) {
            throw new IllegalMonitorStateException(me.getName() + " does not hold " + describe());
        }
        if (--hold.count > 0) {
            return;
        }
        holds.remove(me);
        hold.cancelLossHook();
        hold.observed.released();
        if (hold.isLost()) {
            log.warn("{} released {} whose hold (token {}) was already lost; nothing to delete", me.getName(),
                    describe(), hold.fencingToken);
            return;
        }
        if (!hold.session.isAlive()) {
            return; // the client is closing: the node goes with the session
        }
        Hold read = kind == NodeKind.WRITE ? partner.holds.get(me) : null;
        if (read != null && !read.isLost() && exclusiveBetween(hold, read)) {
            // Downgraded, and a writer queued between this write node and the read node: keep the
            // write node until the read hold ends, or that writer would get in beside the reader.
            read.trailingNode = hold.nodePath;
            return;
        }
        List<String> nodes = new ArrayList<>(hold.nodePaths);
        if (hold.trailingNode != null) {
            nodes.add(hold.trailingNode);
        }
        // A write node kept after a downgrade, or released while the thread's read node (the
        // downgrade) is in the directory: the directory is not left empty, nothing to remove. Trying
        // would be refused by our own node, and mark the directory contended for nobody.
        boolean sharesDirectory = hold.trailingNode != null || read != null;
        Waits.uninterruptibly(queues.release(hold.session, nodes, sharesDirectory ? List.of() : hold.removableDirs));
    }

    /**
     * Is a writer queued between a write node and a later read node of the same thread? Used on
     * downgrade. When the queue cannot be read, answers true: keeping the write node is safe.
     */
    private boolean exclusiveBetween(Hold write, Hold read) {
        try {
            for (QueueNode n : Waits.uninterruptibly(queue.read(write.session))) {
                NodeKind k = NodeKind.of(n);
                if ((k == null || !k.shared()) && n.sequence() > write.node.sequence()
                        && n.sequence() < read.node.sequence()) {
                    return true;
                }
            }
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** The current thread's hold, checked by the server, guards {@code ops}. */
    java.util.List<org.apache.zookeeper.OpResult> commitIfHeld(Iterable<org.apache.zookeeper.Op> ops) {
        Hold hold = holds.get(Thread.currentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException(Thread.currentThread().getName() + " does not hold " + describe());
        }
        if (hold.isLost()) {
            throw new io.zkcoord.LockLostException("the hold of " + describe() + " with " + hold.nodePath
                    + " was lost with its session; nothing applied");
        }
        return io.zkcoord.queue.GuardedCommit.commit(hold.session, hold.nodePaths, ops);
    }

    boolean isHeldByCurrentThread() {
        return isHeldBy(Thread.currentThread());
    }

    private boolean isHeldBy(Thread thread) {
        Hold hold = holds.get(thread);
        return hold != null && !hold.isLost();
    }

    long fencingToken() {
        Hold hold = holds.get(Thread.currentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException(Thread.currentThread().getName() + " does not hold " + describe());
        }
        return hold.fencingToken;
    }

    // ------------------------------------------------------------------ leases

    /** @return the lease side of this lock: the core's, with this lock's kind and rule */
    Leases leases() {
        return leases;
    }

    // ------------------------------------------------------------------ listeners

    void addLossListener(LockLossListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        lossListeners.add(listener);
    }

    private void ensureOpen() {
        if (client.isClosed()) {
            throw new IllegalStateException("cannot acquire " + describe() + ": " + client + " is closed");
        }
    }

    /** What coordination listeners are told a wait or hold of this lock is of (a multi-lock: every path). */
    @Override
    public CoordinationEvent observedAs(Holder holder) {
        return observedAs[holder.ordinal()];
    }

    @Override
    public String describe() {
        switch (kind) {
            case LOCK:
                return "mutex " + path;
            case MULTI:
                return "multi-lock " + queues;
            default:
                return kind.prefix() + " lock " + path;
        }
    }
}
