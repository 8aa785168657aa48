package io.zkcoord.shard;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.LockLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.group.Member;
import io.zkcoord.group.ZkGroup;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.InOrder;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.queue.QueuePaths;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shards {@code 0..shards-1} of one path, spread over the live members; each shard owned by at
 * most one.
 *
 * <pre>{@code
 * ZkShardMember member = new ZkShardMember(client, "/shards/invoices", "worker-3", 64);
 * member.addListener(new ShardListener() {
 *     public void assigned(int shard, long token) { workers.start(shard, token); }
 *     public void revoked(int shard, long token, RevokeReason reason) { workers.stop(shard); }
 * });
 * member.start();
 * }</pre>
 *
 * <h2>How it works</h2>
 * Under the path live:
 * <ul>
 *   <li>{@code members}: a {@link ZkGroup} of the live members;
 *   <li>{@code coordinator}: a {@link ZkLeaderElection}; its leader keeps the assignment balanced;
 *   <li>{@code assignment}: the target owner of every shard ({@link ShardAssignment}), written only
 *       by the coordinator, from the members in join order and the previous assignment
 *       ({@link ShardSpread}: balanced and sticky), and watched by every member;
 *   <li>{@code shard-<k>}: one lock queue per shard. Owning a shard is holding its lock (a {@link
 *       ZkMutex} lease): the assignment says who should own a shard, the lock says who does.
 * </ul>
 * A member acquires the lock of every shard the assignment gives it and releases those it no
 * longer gives it. A new owner therefore waits in the shard's queue until the old owner released
 * (after telling its listeners {@code revoked}) or its session ended: never two owners, and the
 * token (the {@code czxid} of the owner's node) grows from each owner to the next.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Exclusive.</b> A shard is in at most one member's {@link #owned()}, outside the window a
 *       lock has too: a member cut off from the ensemble owns nothing from the moment its client
 *       reports {@link ConnectionState#SUSPENDED} (listeners hear {@code revoked(SUSPENDED)} at
 *       once), and the ensemble gives its shards away only after its whole session timeout.
 *   <li><b>Balanced and sticky.</b> Once membership is stable every member owns {@code
 *       floor(n/m)} or {@code ceil(n/m)} shards; a change moves only what balance needs.
 *   <li><b>Listeners</b> hear {@code assigned} and {@code revoked} strictly alternating per shard,
 *       one call at a time, in order, on a library thread. A shard moved away ({@code MOVED}) or
 *       given up by {@link #close()} ({@code CLOSED}) is released only after every listener has
 *       returned from {@code revoked}: the next owner cannot start before this one stopped. (A
 *       listener that never returns keeps the shard, and holds up this member's later events.)
 *   <li>A second member with the same id in the group fails {@link #start()} with {@link
 *       io.zkcoord.group.DuplicateMemberException}; a member with another shard count than the
 *       path's gets {@link IllegalStateException}.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ZkShardMember implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkShardMember.class);
    private static final long RETRY_DELAY_MILLIS = 1_000;
    private static final long CLOSE_WAIT_MILLIS = 10_000;

    private enum Phase { NEW, STARTED, CLOSED }

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final String memberId;
    private final int shards;
    private final String assignmentPath;
    private final ZkGroup group;
    private final ZkLeaderElection coordinator;
    private final InOrder events;
    private final List<ShardListener> listeners = new CopyOnWriteArrayList<>();
    private final ConnectionListener connection = this::connectionChanged;
    private final Watcher assignmentWatcher = this::assignmentChanged;
    /** Runs every decision about this member's shards, one at a time; never blocks on ZooKeeper. */
    private final ScheduledExecutorService decisions;
    /**
     * Runs the coordinator's work, one at a time: it blocks on ZooKeeper calls (under the retry
     * policy), so it has a thread of its own and never holds up a step-down on SUSPENDED.
     */
    private final ScheduledExecutorService coordination;

    // Touched only on the decisions thread.
    private final Map<Integer, Shard> mine = new HashMap<>();
    private final Map<Integer, ZkMutex> locks = new HashMap<>();
    private ShardAssignment target;
    private boolean suspended;
    /** Whether this member's coordinator participant leads; read by the coordination thread. */
    private volatile boolean leading;

    // Guarded by this.
    private Phase phase = Phase.NEW;
    /** Shards told {@code assigned} and not yet {@code revoked}, with their tokens. */
    private volatile Map<Integer, Long> ownedView = Map.of();
    /** The leases of the shards in {@link #ownedView}. */
    private volatile Map<Integer, ZkLease> leaseView = Map.of();

    /** One shard this member wants or owns. Touched only on the decisions thread. */
    private static final class Shard {
        final int id;
        CompletableFuture<ZkLease> pending;
        ZkLease lease;
        boolean told;

        Shard(int id) {
            this.id = id;
        }
    }

    /**
     * @param client the client whose session holds this member's shards
     * @param path the shards' directory, e.g. {@code /shards/invoices}; made on demand
     * @param memberId this member's id, unique among the path's members
     * @param shards how many shards the path has, at least 1; every member of the path must say the same
     * @throws IllegalArgumentException if an argument is null, {@code shards < 1}, or the id or the
     *     path is invalid
     */
    public ZkShardMember(ZkClient client, String path, String memberId, int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, was " + shards);
        }
        this.path = QueuePaths.validate("shard", path);
        this.group = new ZkGroup(client, path + "/members", memberId, null);
        this.client = client;
        this.services = ClientServices.of(client);
        this.memberId = memberId;
        this.shards = shards;
        this.assignmentPath = path + "/assignment";
        this.coordinator = new ZkLeaderElection(client, path + "/coordinator", memberId);
        this.events = new InOrder(services.userCallbacks());
        this.decisions = singleThread("zkcoord-shards-" + memberId);
        this.coordination = singleThread("zkcoord-shards-coordinator-" + memberId);
    }

    /**
     * Joins the path's members and starts taking shards; returns once joined (the shards come
     * through the listeners and {@link #owned()}).
     *
     * @throws IllegalStateException if started before or closed, or the path was made for another
     *     number of shards
     * @throws io.zkcoord.group.DuplicateMemberException if a member with this id is already there
     * @throws CoordinationException if ZooKeeper cannot be reached within the client's retry policy
     */
    public void start() {
        synchronized (this) {
            if (phase != Phase.NEW) {
                throw new IllegalStateException(describe() + (phase == Phase.CLOSED ? " is closed" : " was already started"));
            }
            phase = Phase.STARTED;
        }
        try {
            checkShardCount();
            group.addListener(members -> later(coordination, this::coordinate, 0));
            group.join();
        } catch (RuntimeException e) {
            synchronized (this) {
                phase = Phase.CLOSED;
            }
            group.close();
            decisions.shutdown();
            coordination.shutdown();
            throw e;
        }
        client.addConnectionListener(connection);
        coordinator.addListener(new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                leading = true;
                later(coordination, ZkShardMember.this::coordinate, 0);
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                leading = false;
            }
        });
        coordinator.start();
        readAssignment();
    }

    /** @return the shards this member owns now, ascending; empty while the client is not connected */
    public Set<Integer> owned() {
        ConnectionState state = client.state();
        if (state == null || !state.isConnected()) {
            return Set.of();
        }
        return Collections.unmodifiableSet(new TreeSet<>(ownedView.keySet()));
    }

    /**
     * @param shard a shard
     * @return the fencing token of {@code shard} if this member owns it now, else empty
     */
    public OptionalLong token(int shard) {
        Long token = owned().contains(shard) ? ownedView.get(shard) : null;
        return token == null ? OptionalLong.empty() : OptionalLong.of(token);
    }

    /**
     * Applies {@code ops} only if this member still owns {@code shard}, checked by the server: the
     * operations go in one {@code multi} behind a {@code check} that the shard's lock node exists
     * (see {@link ZkLease#commitIfHeld(Iterable)}). A member whose session expired during a pause
     * has its write refused, whatever it believes.
     *
     * @param shard an owned shard
     * @param ops the operations
     * @return the results of {@code ops}, in order
     * @throws io.zkcoord.LockLostException if this member does not own {@code shard} now, or its
     *     node is gone; nothing applied
     * @throws CoordinationException as {@link ZkLease#commitIfHeld(Iterable)}
     */
    public List<OpResult> commitIfHeld(int shard, Iterable<Op> ops) {
        ZkLease lease = owned().contains(shard) ? leaseView.get(shard) : null;
        if (lease == null) {
            throw new LockLostException(describe() + " does not own shard " + shard);
        }
        return lease.commitIfHeld(ops);
    }

    /**
     * Adds a listener. It is told {@code assigned} at once for every shard this member owns now.
     *
     * @param listener the listener
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(ShardListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        events.execute(() -> {
            listeners.add(listener);
            ownedView.forEach((shard, token) -> call(listener, l -> l.assigned(shard, token)));
        });
    }

    /**
     * Reads who owns each shard now from the ensemble: the holder of each shard's lock, named by
     * its member id. Four requests whatever the number of shards: the shard queues in one read, their
     * first nodes' owners in one read, and the members in two.
     *
     * @return shard to owner id, for every shard that has an owner (unmodifiable, sorted)
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws CoordinationException if ZooKeeper cannot be reached within the client's retry policy
     */
    public Map<Integer, String> assignment() throws InterruptedException {
        return new OwnerReader(client, path, shards).read();
    }

    /** @return this member's id */
    public String memberId() {
        return memberId;
    }

    /**
     * Gives every shard up (listeners hear {@code revoked(CLOSED)}, then each lock is released, at
     * once and in parallel, so the next owners can start), then leaves the group. Idempotent;
     * returns within about ten seconds whatever the network does (a lock not released by then is
     * released in the background, or goes with the session); never throws.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                return;
            }
            boolean started = phase == Phase.STARTED;
            phase = Phase.CLOSED;
            if (!started) {
                decisions.shutdown();
                coordination.shutdown();
                return;
            }
        }
        client.removeConnectionListener(connection);
        CompletableFuture<CompletableFuture<Void>> dropped = new CompletableFuture<>();
        try {
            decisions.execute(() -> {
                List<CompletableFuture<Void>> releases = new java.util.ArrayList<>();
                try {
                    for (Shard s : List.copyOf(mine.values())) {
                        releases.add(drop(s, RevokeReason.CLOSED));
                    }
                } finally {
                    dropped.complete(CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)));
                }
            });
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
            dropped.get(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)
                    .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("{}: giving shards up did not finish in time: {}", describe(), e.toString());
        }
        coordinator.close();
        group.close();
        decisions.shutdown();
        coordination.shutdown();
    }

    @Override
    public String toString() {
        return "ZkShardMember[" + path + ", " + memberId + ", " + shards + " shards]";
    }

    /** Runs {@code task} on {@code executor} after {@code delayMillis}; nothing once this member is closed. */
    private void later(ScheduledExecutorService executor, Runnable task, long delayMillis) {
        try {
            if (delayMillis <= 0) {
                executor.execute(task);
            } else {
                executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("{} is closed; dropped a late task", describe());
        }
    }

    private static ScheduledExecutorService singleThread(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    // ------------------------------------------------------------------ the assignment

    /**
     * Makes the assignment node with an empty assignment if it is missing; otherwise checks that it
     * was made for as many shards as this member has.
     */
    private void checkShardCount() {
        try {
            ShardAssignment recorded = ShardNodes.createOrRead(client, path, assignmentPath, ShardAssignment.empty(shards));
            if (recorded.shards() != shards) {
                throw new IllegalStateException(describe() + ": the path has " + recorded.shards()
                        + " shards, this member was made for " + shards);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException(describe() + ": interrupted while starting", e);
        } catch (KeeperException e) {
            throw new CoordinationException(describe() + ": cannot read " + assignmentPath + ": " + e.getMessage(), e);
        }
    }

    /** Reads the assignment with a watch (ZooKeeper's callback; never blocks); each change reads it again. */
    private void readAssignment() {
        if (closed() || client.isClosed()) {
            return;
        }
        services.session().thenAccept(session -> session.zooKeeper().getData(assignmentPath, assignmentWatcher,
                (rc, p, ctx, data, stat) -> {
                    KeeperException.Code code = KeeperException.Code.get(rc);
                    if (code == KeeperException.Code.OK) {
                        ShardAssignment read = ShardAssignment.decode(data);
                        later(decisions, () -> {
                            target = read;
                            reconcile();
                        }, 0);
                    } else if (code != KeeperException.Code.CONNECTIONLOSS && code != KeeperException.Code.SESSIONEXPIRED) {
                        log.warn("{}: cannot read {}: {}; trying again", describe(), assignmentPath, code);
                        later(decisions, this::readAssignment, RETRY_DELAY_MILLIS);
                    }
                    // Connection trouble: RECONNECTED reads again.
                }, null));
    }

    private void assignmentChanged(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            readAssignment();
        }
    }

    /**
     * The coordinator's one job (coordination thread): when it leads, write the spread of the shards
     * over the current members, if it differs from the assignment there, by a versioned write (a
     * concurrent write by a former coordinator makes it read and decide again).
     */
    private void coordinate() {
        if (!leading || closed()) {
            return;
        }
        List<String> members = group.members().stream().map(Member::id).toList();
        if (members.isEmpty()) {
            return; // the view has not been read yet: the group listener calls again
        }
        try {
            Stat stat = new Stat();
            byte[] data = client.call(assignmentPath, zk -> zk.getData(assignmentPath, false, stat));
            ShardAssignment current = ShardAssignment.decode(data);
            Map<Integer, String> spread = ShardSpread.spread(shards, members, current.owners());
            if (spread.equals(current.owners())) {
                return;
            }
            ShardAssignment next = new ShardAssignment(shards, spread);
            client.call(assignmentPath, zk -> zk.setData(assignmentPath, next.encode(), stat.getVersion()));
            log.info("{}: assignment over {} members written (version {})", describe(), members.size(), stat.getVersion() + 1);
        } catch (KeeperException.BadVersionException e) {
            later(coordination, this::coordinate, 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed() && !client.isClosed()) {
                log.warn("{}: could not write the assignment; trying again in {} ms: {}", describe(), RETRY_DELAY_MILLIS, e.toString());
                later(coordination, this::coordinate, RETRY_DELAY_MILLIS);
            }
        }
    }

    // ------------------------------------------------------------------ owning shards (decisions thread)

    /** Takes the shards the assignment gives this member and gives up the others. */
    private void reconcile() {
        if (target == null || closed()) {
            return; // close() gives every shard up itself
        }
        Set<Integer> wanted = new TreeSet<>(target.shardsOf(memberId));
        for (Shard s : List.copyOf(mine.values())) {
            if (!wanted.contains(s.id)) {
                drop(s, RevokeReason.MOVED);
            }
        }
        for (int shard : wanted) {
            if (!mine.containsKey(shard)) {
                take(shard);
            }
        }
    }

    private void take(int shard) {
        Shard s = new Shard(shard);
        mine.put(shard, s);
        ZkMutex lock = locks.computeIfAbsent(shard, k -> new ZkMutex(client, path + "/shard-" + k));
        s.pending = lock.acquireAsync();
        s.pending.whenComplete((lease, failure) -> later(decisions, () -> granted(s, lease, failure), 0));
    }

    private void granted(Shard s, ZkLease lease, Throwable failure) {
        if (mine.get(s.id) != s) {
            if (lease != null) {
                lease.release(); // given up while it was being granted
            }
            return;
        }
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            mine.remove(s.id);
            if (!(cause instanceof CancellationException) && !closed() && !client.isClosed()) {
                log.warn("{}: could not take shard {}; trying again in {} ms: {}", describe(), s.id, RETRY_DELAY_MILLIS, cause.toString());
                later(decisions, this::reconcile, RETRY_DELAY_MILLIS);
            }
            return;
        }
        s.pending = null;
        s.lease = lease;
        lease.whenLost().thenRun(() -> later(decisions, () -> lost(s, lease), 0));
        if (!suspended && client.state().isConnected()) {
            tellAssigned(s);
        }
    }

    private void lost(Shard s, ZkLease lease) {
        if (mine.get(s.id) != s || s.lease != lease) {
            return;
        }
        mine.remove(s.id);
        if (s.told) {
            tellRevoked(s, RevokeReason.LOST);
        }
        reconcile(); // still wanted: queue again in the new session
    }

    /**
     * Gives {@code s} up: abandons its acquisition, or tells the listeners {@code revoked(reason)}
     * and releases its lock once every listener has returned, so that the next owner cannot start
     * before this one stopped.
     *
     * @return completes once the lock is released (or there was none)
     */
    private CompletableFuture<Void> drop(Shard s, RevokeReason reason) {
        mine.remove(s.id);
        if (s.pending != null) {
            s.pending.cancel(false); // abandons the acquisition and deletes its node
        }
        if (s.lease == null) {
            return CompletableFuture.completedFuture(null);
        }
        ZkLease lease = s.lease;
        CompletableFuture<Void> heard = s.told ? tellRevoked(s, reason) : CompletableFuture.completedFuture(null);
        return heard.thenRunAsync(lease::release, services.userCallbacks());
    }

    /** Events thread of the client. */
    private void connectionChanged(ConnectionState state) {
        if (state == ConnectionState.SUSPENDED) {
            later(decisions, () -> {
                suspended = true;
                for (Shard s : mine.values()) {
                    if (s.told) {
                        tellRevoked(s, RevokeReason.SUSPENDED);
                    }
                }
            }, 0);
        } else if (state.isConnected()) {
            later(decisions, () -> {
                suspended = false;
                for (Shard s : mine.values()) {
                    if (s.lease != null && s.lease.isValid() && !s.told) {
                        tellAssigned(s);
                    }
                }
            }, 0);
            readAssignment();
        }
    }

    private void tellAssigned(Shard s) {
        s.told = true;
        long token = s.lease.fencingToken();
        Map<Integer, Long> view = new HashMap<>(ownedView);
        view.put(s.id, token);
        Map<Integer, ZkLease> leases = new HashMap<>(leaseView);
        leases.put(s.id, s.lease);
        leaseView = Map.copyOf(leases);
        ownedView = Map.copyOf(view);
        events.execute(() -> listeners.forEach(l -> call(l, x -> x.assigned(s.id, token))));
    }

    /** @return completes once every listener has returned from {@code revoked} */
    private CompletableFuture<Void> tellRevoked(Shard s, RevokeReason reason) {
        s.told = false;
        long token = s.lease.fencingToken();
        Map<Integer, Long> view = new HashMap<>(ownedView);
        view.remove(s.id);
        ownedView = Map.copyOf(view);
        Map<Integer, ZkLease> leases = new HashMap<>(leaseView);
        leases.remove(s.id);
        leaseView = Map.copyOf(leases);
        CompletableFuture<Void> heard = new CompletableFuture<>();
        events.execute(() -> {
            listeners.forEach(l -> call(l, x -> x.revoked(s.id, token, reason)));
            heard.complete(null);
        });
        return heard;
    }

    private void call(ShardListener listener, java.util.function.Consumer<ShardListener> event) {
        try {
            event.accept(listener);
        } catch (Throwable t) {
            log.error("{}: shard listener {} failed", describe(), listener, t);
        }
    }

    private synchronized boolean closed() {
        return phase == Phase.CLOSED;
    }

    private String describe() {
        return "shard member " + memberId + " of " + path;
    }
}
