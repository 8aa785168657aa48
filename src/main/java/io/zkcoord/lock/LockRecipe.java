package io.zkcoord.lock;

import io.zkcoord.CoordinationException;
import io.zkcoord.SessionLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.retry.ZkCall;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper protocol of the lock recipes, top to bottom, for one kind of node in one lock
 * directory:
 *
 * <ol>
 *   <li>Create {@code <dir>/<kind>-<attemptId>-} as {@code EPHEMERAL_SEQUENTIAL}; the directory and
 *       its missing parents are created on demand as {@code CONTAINER} nodes, which the server
 *       removes once empty. If the connection drops during the create, the server may have made
 *       the node though the reply was lost: find it again by its attempt id (checking it belongs
 *       to this session) instead of creating a second one.
 *   <li>Read the directory's children, without a watch. Order them by sequence number only.
 *   <li>Ask {@link QueueRule}: held, or which single node blocks.
 *   <li>Watch only that node ({@code getData}, so no watch is left behind if it is already gone).
 *       If it is already gone, go to 2. When its watch fires, go to 2, unless it was the only
 *       blocker: then the lock is held without reading again.
 * </ol>
 * Release deletes the node. Nobody ever watches the directory, so a release wakes only the
 * waiters of the released node, whatever the length of the queue.
 *
 * <p>Stateless apart from its settings; thread-safe.
 */
final class LockRecipe {

    private static final Logger log = LoggerFactory.getLogger(LockRecipe.class);

    /** A node of ours in the queue. */
    record Enqueued(ZkSession session, String path, LockNode node, long czxid) {
    }

    /** How {@link #awaitTurn} ended. */
    enum Outcome {
        /** The lock is held by the node. */
        HELD,
        /** The deadline passed first; the node is still in the queue. */
        TIMED_OUT,
        /** The node is gone: its session ended, or somebody deleted it. */
        GONE
    }

    /**
     * Whether step 1 looks for the node of a create whose reply was lost before creating again. Always
     * true in use: it exists only so that a test (CreateRecoveryFaultTest) can switch the recovery off
     * and show that a lost create reply then leaves an orphan node behind, i.e. that the recovery
     * matters and the test would catch its absence.
     */
    static volatile boolean recoverLostCreates = true;

    private final ZkClient client;
    private final String dir;
    private final NodeKind kind;

    LockRecipe(ZkClient client, String dir, NodeKind kind) {
        this.client = client;
        this.dir = dir;
        this.kind = kind;
    }

    // ------------------------------------------------------------------ step 1: enqueue

    /**
     * Step 1: puts a new node of this kind into the queue, in {@code session}.
     *
     * @throws InterruptedException if interrupted and the acquisition lets it; no node is left
     * @throws Acquisition.DeadlinePassed if the acquisition's deadline passed while ZooKeeper was
     *     unreachable; no node is left (it is deleted in the background if it was made)
     * @throws CoordinationException if ZooKeeper could not be reached within the retry policy; no
     *     node is left (it is deleted in the background once the connection returns)
     */
    Enqueued enqueue(ZkSession session, Acquisition acquisition) throws InterruptedException {
        CreateOrFind step = new CreateOrFind(session, UUID.randomUUID().toString().replace("-", ""));
        try {
            return call(session, dir, step, acquisition);
        } catch (InterruptedException | RuntimeException e) {
            if (step.attempted && !(e instanceof SessionLostException)) {
                forgetAttempt(session, step.attemptId);
            }
            throw e;
        }
    }

    /**
     * Creates the node, or, when an earlier try of this very call may have created it (its reply
     * was lost), finds it first. This makes the create safe to repeat under the retry loop.
     */
    private final class CreateOrFind implements ZkCall<Enqueued> {
        final ZkSession session;
        final String attemptId;
        final String prefix;
        final byte[] ownerInfo = OwnerInfo.ofCurrentThread();
        /** Set before the first create is sent: from then on the node may exist. */
        volatile boolean attempted;

        CreateOrFind(ZkSession session, String attemptId) {
            this.session = session;
            this.attemptId = attemptId;
            this.prefix = LockNode.prefix(kind, attemptId);
        }

        @Override
        public Enqueued call(ZooKeeper zk) throws KeeperException, InterruptedException {
            if (attempted && recoverLostCreates) {
                // The lost create may still be on its way through the ensemble, and this try may
                // go to a server that has not applied it yet: sync the directory before looking.
                sync(zk);
                Enqueued found = find(zk, session, prefix);
                if (found != null) {
                    log.info("recovered node {} of {} after a lost create reply", found.path(), dir);
                    return found;
                }
            }
            attempted = true;
            for (int tries = 0; ; tries++) {
                Stat stat = new Stat();
                try {
                    String path = zk.create(dir + "/" + prefix, ownerInfo, client.acl(),
                            CreateMode.EPHEMERAL_SEQUENTIAL, stat);
                    return enqueued(session, path, stat);
                } catch (KeeperException.NoNodeException e) {
                    if (tries >= 3) {
                        throw e;
                    }
                    createDirectory(zk, dir);
                }
            }
        }
    }

    /** Brings the server this handle talks to up to date with the leader, for {@link #dir}. */
    private void sync(ZooKeeper zk) throws KeeperException, InterruptedException {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        zk.sync(dir, (rc, path, ctx) -> done.complete(rc), null);
        int rc;
        try {
            rc = done.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("sync callback failed", e);
        }
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE) {
            throw KeeperException.create(code, dir);
        }
    }

    /** @return our node whose name starts with {@code prefix}, or null if there is none */
    private Enqueued find(ZooKeeper zk, ZkSession session, String prefix) throws KeeperException, InterruptedException {
        List<String> children;
        try {
            children = zk.getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        for (String name : children) {
            if (name.startsWith(prefix)) {
                String path = dir + "/" + name;
                Stat stat = zk.exists(path, false);
                if (stat != null && stat.getEphemeralOwner() == session.id()) {
                    return enqueued(session, path, stat);
                }
                if (stat != null) {
                    log.warn("node {} carries our attempt id but belongs to session 0x{}; ignored", path,
                            Long.toHexString(stat.getEphemeralOwner()));
                }
            }
        }
        return null;
    }

    private Enqueued enqueued(ZkSession session, String path, Stat stat) {
        if (stat.getEphemeralOwner() != session.id()) {
            throw new CoordinationException("node " + path + " belongs to session 0x"
                    + Long.toHexString(stat.getEphemeralOwner()) + ", not to ours, 0x" + Long.toHexString(session.id()));
        }
        String name = path.substring(dir.length() + 1);
        LockNode node = LockNode.parse(name)
                .orElseThrow(() -> new CoordinationException("unexpected lock node name " + path));
        return new Enqueued(session, path, node, stat.getCzxid());
    }

    /** Creates {@code path} and its missing parents as CONTAINER nodes. */
    private void createDirectory(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        try {
            zk.create(path, new byte[0], client.acl(), CreateMode.CONTAINER);
        } catch (KeeperException.NodeExistsException e) {
            // made by another client: fine
        } catch (KeeperException.NoNodeException e) {
            createDirectory(zk, path.substring(0, path.lastIndexOf('/')));
            createDirectory(zk, path);
        }
    }

    // ------------------------------------------------------------------ steps 2 to 4: wait for the turn

    /**
     * Steps 2 to 4: waits until {@code own} holds the lock, the acquisition's deadline passes, or
     * the node is gone. A deadline already passed means one look.
     *
     * @throws InterruptedException if interrupted and the acquisition lets it (the node stays:
     *     the caller abandons it)
     * @throws Acquisition.DeadlinePassed if the deadline passed while ZooKeeper was unreachable
     *     (the node stays: the caller abandons it)
     * @throws CoordinationException if ZooKeeper could not be reached within the retry policy
     */
    Outcome awaitTurn(Enqueued own, Acquisition acquisition) throws InterruptedException {
        ZkSession session = own.session();
        for (;;) {
            // 2. Read the queue. No watch: nobody watches the directory.
            List<LockNode> queue = readQueue(session, acquisition);
            // 3. Held, or which node blocks?
            QueueRule.Turn turn = QueueRule.decide(queue, own.node());
            if (turn instanceof QueueRule.Held) {
                return session.isAlive() ? Outcome.HELD : Outcome.GONE;
            }
            if (turn instanceof QueueRule.Missing) {
                return Outcome.GONE;
            }
            if (acquisition.expired()) {
                return Outcome.TIMED_OUT;
            }
            // 4. Watch only the blocking node.
            QueueRule.Watch watch = (QueueRule.Watch) turn;
            String watched = dir + "/" + watch.node().name();
            Waiter waiter = new Waiter();
            Runnable cancel = session.onEnd(() -> waiter.signal(Waiter.Wake.SESSION_ENDED));
            try {
                if (!watchIfPresent(session, watched, waiter, acquisition)) {
                    continue; // already gone: read the queue again
                }
                Waiter.Wake wake = waiter.await(acquisition);
                switch (wake) {
                    case NODE_DELETED:
                        if (watch.heldWhenGone() && session.isAlive()) {
                            return Outcome.HELD;
                        }
                        break;
                    case NODE_CHANGED:
                        break;
                    case SESSION_ENDED:
                        return Outcome.GONE;
                    case TIMED_OUT:
                        forgetWatch(session, watched, waiter);
                        return Outcome.TIMED_OUT;
                    default:
                        throw new IllegalStateException("unknown wake " + wake);
                }
            } catch (InterruptedException | Acquisition.DeadlinePassed e) {
                forgetWatch(session, watched, waiter);
                throw e;
            } finally {
                cancel.run();
            }
        }
    }

    /** Step 2. */
    private List<LockNode> readQueue(ZkSession session, Acquisition acquisition) throws InterruptedException {
        return LockNode.queue(call(session, dir, zk -> {
            try {
                return zk.getChildren(dir, false);
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
        }, acquisition));
    }

    /** Step 4: sets a data watch on {@code path}. @return false if the node is already gone */
    private boolean watchIfPresent(ZkSession session, String path, Waiter waiter, Acquisition acquisition)
            throws InterruptedException {
        return call(session, path, zk -> {
            try {
                zk.getData(path, waiter, null);
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        }, acquisition);
    }

    /**
     * Drops a watch nobody waits for any more from this client, so its watcher is not kept. Best
     * effort. The server keeps its side of the watch (ZooKeeper removes a server watch only with
     * every watcher of the path, which would take other threads' watches of this session along):
     * when the node goes, one notification is sent and ignored.
     */
    private void forgetWatch(ZkSession session, String path, Waiter waiter) {
        if (!session.isAlive()) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            session.zooKeeper().removeWatches(path, waiter, Watcher.WatcherType.Data, true);
        } catch (KeeperException | InterruptedException | RuntimeException e) {
            log.debug("could not remove the watch on {}: {}", path, e.toString());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Is a writer queued between a write node and a later read node of the same thread? Used on
     * downgrade. When the queue cannot be read, answers true: keeping the write node is safe.
     */
    boolean exclusiveBetween(ZkSession session, LockNode first, LockNode last) {
        Acquisition acquisition = Acquisition.uninterruptible();
        try {
            for (LockNode n : readQueue(session, acquisition)) {
                if (!n.kind().shared() && n.sequence() > first.sequence() && n.sequence() < last.sequence()) {
                    return true;
                }
            }
            return false;
        } catch (CoordinationException | InterruptedException e) {
            return true;
        } finally {
            acquisition.restore();
        }
    }

    // ------------------------------------------------------------------ release and clean-up

    /**
     * Deletes the nodes of a hold, retried under the policy; does not throw {@link
     * InterruptedException} (an interrupt is kept for the caller).
     *
     * @throws CoordinationException if the policy gave up; the deletion then goes on in the
     *     background until the connection returns or the session ends
     */
    void release(ZkSession session, String... paths) {
        Acquisition acquisition = Acquisition.uninterruptible();
        try {
            for (int i = 0; i < paths.length; i++) {
                if (paths[i] == null) {
                    continue;
                }
                try {
                    call(session, paths[i], deleteCall(paths[i]), acquisition);
                } catch (SessionLostException e) {
                    return; // the nodes went with their session
                } catch (CoordinationException e) {
                    // This node and every one after it (a downgrade's kept write node) must still go,
                    // or a writer queued behind them would wait until the session ends.
                    for (int j = i; j < paths.length; j++) {
                        if (paths[j] != null) {
                            session.callEventually(paths[j], deleteCall(paths[j]));
                        }
                    }
                    throw e;
                }
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException("uninterruptible call interrupted", e);
        } finally {
            acquisition.restore();
        }
    }

    /**
     * Takes a node out of the queue that will not hold the lock (timeout, interrupt, failure):
     * one try now, and in the background if that fails. Never throws, never waits long; keeps
     * the thread's interrupt status.
     */
    void abandon(Enqueued own) {
        deleteSoon(own.session(), own.path(), deleteCall(own.path()));
    }

    /** Like {@link #abandon}, for a create whose outcome is unknown: finds the node by attempt id. */
    private void forgetAttempt(ZkSession session, String attemptId) {
        String prefix = LockNode.prefix(kind, attemptId);
        deleteSoon(session, dir, zk -> {
            sync(zk); // the lost create may not have reached this server yet
            Enqueued found = find(zk, session, prefix);
            if (found != null) {
                deleteCall(found.path()).call(zk);
            }
            return null;
        });
    }

    private static void deleteSoon(ZkSession session, String path, ZkCall<Void> delete) {
        if (!session.isAlive()) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            delete.call(session.zooKeeper());
        } catch (KeeperException | RuntimeException e) {
            log.debug("deleting {} later: {}", path, e.toString());
            session.callEventually(path, delete);
        } catch (InterruptedException e) {
            interrupted = true;
            session.callEventually(path, delete);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static ZkCall<Void> deleteCall(String path) {
        return zk -> {
            try {
                zk.delete(path, -1);
            } catch (KeeperException.NoNodeException e) {
                // already gone
            }
            return null;
        };
    }

    /**
     * Runs {@code call} on {@code session} under the retry policy, with the acquisition's interrupt
     * rule; once its deadline has passed the call is not tried again.
     */
    private static <T> T call(ZkSession session, String path, ZkCall<T> call, Acquisition acquisition)
            throws InterruptedException {
        return acquisition.run(() -> {
            try {
                boolean[] tried = {false};
                return session.call(path, zk -> {
                    if (tried[0]) {
                        acquisition.checkDeadline();
                    }
                    tried[0] = true;
                    return call.call(zk);
                });
            } catch (KeeperException e) {
                throw new CoordinationException(e.code() + " on " + path, e);
            }
        });
    }
}
