package io.zkcoord.queue;

import io.zkcoord.CoordinationException;
import io.zkcoord.SessionLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue directory of one client: where every recipe's {@link Acquisition}s queue, and the
 * asynchronous work around them that nobody waits for: releasing nodes, deleting abandoned ones,
 * creating the directory.
 *
 * <p>Nothing here blocks a thread: every ZooKeeper call is asynchronous, every retry is a task on
 * the client's scheduler. Thread-safe; stateless apart from its settings.
 */
public final class QueueDirectory {

    private static final Logger log = LoggerFactory.getLogger(QueueDirectory.class);
    /** Pace of clean-up that goes on in the background until the connection returns. */
    private static final long BACKGROUND_RETRY_MILLIS = 200;

    /**
     * Whether an acquisition looks for the node of a create whose reply was lost before creating
     * again. Always true in use: it exists only so that a test (CreateRecoveryFaultTest) can switch
     * the recovery off and show that a lost create reply then leaves an orphan node behind.
     */
    public static volatile boolean recoverLostCreates = true;

    private final ClientServices services;
    private final String dir;
    /** The directory's parent, made once: every create's reply records that it exists. */
    private final String parent;
    /** The data the directory node is created with (a recipe's settings, such as a permit count). */
    private final byte[] dirData;
    /** Checks the directory's settings when it is (re)created; null for recipes that have none. */
    private final DirectoryGuard guard;
    /** How the recipe names and orders its nodes here. */
    private final QueueNaming naming;
    /** This directory as a set of one. */
    private final QueueSet alone;

    /**
     * A recipe's settings recorded in its directory node (a semaphore's permit count), checked
     * against the directory as every acquisition finds it: an acquisition reads the directory's
     * {@code czxid} with its queue, and whenever that is not the one last validated (first use, or
     * the directory was removed and made again, perhaps by another process with other settings),
     * the directory's data is validated again before the rule is asked.
     */
    public interface DirectoryGuard {
        /** @return the {@code czxid} of the directory last validated, or 0 if none */
        long validatedCzxid();

        /**
         * Reads the directory's data in {@code session} and validates it, recording its czxid.
         *
         * @return completes once valid; fails with the exception the acquisition must fail with
         *     (for instance {@link IllegalStateException} naming both settings)
         */
        CompletableFuture<Void> validate(ZkSession session);
    }

    /**
     * @param client the client whose sessions hold the nodes
     * @param dir the directory, already validated ({@link QueuePaths#validate})
     */
    public QueueDirectory(ZkClient client, String dir) {
        this(client, dir, new byte[0]);
    }

    /**
     * @param client the client whose sessions hold the nodes
     * @param dir the directory, already validated ({@link QueuePaths#validate})
     * @param dirData the data the directory node is created with
     */
    public QueueDirectory(ZkClient client, String dir, byte[] dirData) {
        this(client, dir, dirData, null);
    }

    /**
     * @param client the client whose sessions hold the nodes
     * @param dir the directory, already validated ({@link QueuePaths#validate})
     * @param dirData the data the directory node is created with
     * @param guard validates the directory's data, or null
     */
    public QueueDirectory(ZkClient client, String dir, byte[] dirData, DirectoryGuard guard) {
        this(client, dir, dirData, guard, QueueNaming.ZKCOORD);
    }

    /**
     * @param client the client whose sessions hold the nodes
     * @param dir the directory, already validated ({@link QueuePaths#validate})
     * @param naming how the recipe names and orders its nodes ({@link QueueNaming#ZKCOORD}, or Curator's)
     */
    public QueueDirectory(ZkClient client, String dir, QueueNaming naming) {
        this(client, dir, new byte[0], null, naming);
    }

    private QueueDirectory(ZkClient client, String dir, byte[] dirData, DirectoryGuard guard, QueueNaming naming) {
        if (naming == null) {
            throw new IllegalArgumentException("naming must not be null");
        }
        this.naming = naming;
        this.services = ClientServices.of(client);
        this.dir = dir;
        this.parent = QueuePaths.parentOf(dir);
        this.dirData = dirData.clone();
        this.guard = guard;
        this.alone = QueueSet.of(List.of(this));
    }

    /** @return how the recipe names and orders its nodes in this directory */
    public QueueNaming naming() {
        return naming;
    }

    DirectoryGuard guard() {
        return guard;
    }

    /** @return the data the directory node is created with */
    byte[] data() {
        return dirData.clone();
    }

    /** @return the directory */
    public String path() {
        return dir;
    }

    /** @return the directory's parent path ({@code /} for a directory at the root) */
    String parentPath() {
        return parent;
    }

    public ClientServices services() {
        return services;
    }

    /**
     * Starts an acquisition: a node of {@code kind} queues in the client's live session (or the
     * next one) and holds when {@code rule} says so.
     *
     * @param kind the node kind, lower-case letters
     * @param rule decides "held, or which node to watch"
     * @param oneLook if true, the acquisition ends (result null, node deleted) at its first answer
     *     other than "held"
     * @return the running acquisition
     */
    public Acquisition acquire(String kind, QueueRule rule, boolean oneLook) {
        return acquire(kind, rule, oneLook, naming.ownerData());
    }

    /** As {@link #acquire(String, QueueRule, boolean)}, with the node's data given (say, a participant id). */
    public Acquisition acquire(String kind, QueueRule rule, boolean oneLook, byte[] data) {
        return alone.acquire(kind, rule, oneLook, data);
    }

    /** @return the set of this one directory: what a lease or hold of it releases through */
    public QueueSet alone() {
        return alone;
    }

    /**
     * Reads the queue and every node's data in {@code session}: two round trips whatever the queue
     * length (one {@code getChildren}, then one {@code multi} of reads). A node that leaves between
     * the two reads is left out.
     *
     * @return the nodes in queue order, each with its data and czxid
     */
    public CompletableFuture<List<Entry>> readEntries(ZkSession session) {
        return read(session).thenCompose(nodes -> {
            if (nodes.isEmpty()) {
                return CompletableFuture.completedFuture(List.<Entry>of());
            }
            List<org.apache.zookeeper.Op> reads = new java.util.ArrayList<>(nodes.size());
            for (QueueNode n : nodes) {
                reads.add(org.apache.zookeeper.Op.getData(dir + "/" + n.name()));
            }
            return underPolicy(session, dir, () -> Requests.multi(session, reads)).thenApply(results -> {
                List<Entry> entries = new java.util.ArrayList<>(nodes.size());
                for (int i = 0; i < nodes.size() && i < results.size(); i++) {
                    if (results.get(i) instanceof org.apache.zookeeper.OpResult.GetDataResult r) {
                        entries.add(new Entry(nodes.get(i), r.getData() == null ? new byte[0] : r.getData(),
                                r.getStat().getCzxid(), r.getStat().getEphemeralOwner()));
                    }
                }
                return entries;
            });
        });
    }

    /**
     * One node of the queue with what a read of it gave.
     *
     * @param node its parsed name
     * @param data its data
     * @param czxid the zxid of its creation
     * @param sessionId the session it belongs to
     */
    public record Entry(QueueNode node, byte[] data, long czxid, long sessionId) {
    }

    /** @return the queue as it is now, read in {@code session} under the retry policy */
    public CompletableFuture<List<QueueNode>> read(ZkSession session) {
        return underPolicy(session, dir, () -> Requests.children(session, dir)).thenApply(naming::queue);
    }

    /**
     * Deletes {@code paths} in {@code session}, in order, each retried under the client's retry
     * policy. Completes when all are deleted, or at once when the session has ended (the nodes
     * went with it). If the policy gives up, completes with {@link CoordinationException} and the
     * deletion goes on in the background until the connection returns or the session ends.
     */
    public CompletableFuture<Void> release(ZkSession session, List<String> paths) {
        if (paths.size() == 1) {
            return releaseOne(session, paths.get(0), paths);
        }
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int i = 0; i < paths.size(); i++) {
            String path = paths.get(i);
            List<String> rest = paths.subList(i, paths.size());
            chain = chain.thenCompose(v -> releaseOne(session, path, rest));
        }
        return chain;
    }

    /** Deletes {@code path}; if the policy gives up, {@code rest} (it, and the nodes after it) go in the background. */
    private CompletableFuture<Void> releaseOne(ZkSession session, String path, List<String> rest) {
        return underPolicy(session, path, () -> Requests.delete(session, path)).exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (Requests.codeOf(failure) == Code.SESSIONEXPIRED || cause instanceof SessionLostException
                    || !session.isAlive()) {
                return CompletableFuture.completedFuture(null); // the nodes went with the session
            }
            // This node and every one after it must still go, or a waiter behind them would wait
            // until the session ends.
            rest.forEach(p -> deleteInBackground(session, p));
            return CompletableFuture.failedFuture(failure);
        });
    }

    /**
     * Reads the directory node's own data in {@code session} under the retry policy.
     *
     * @return its data, or null if the directory does not exist
     */
    public CompletableFuture<Requests.Data> directoryData(ZkSession session) {
        return underPolicy(session, dir, () -> Requests.data(session, dir));
    }

    /**
     * Rewrites a node's data once (same bytes, so only its version changes): fires the watch of the
     * node behind it ({@link QueueRule#announcesPromotion()}). Retried in the background until done,
     * the node is gone, or the session ends.
     */
    void announceInBackground(ZkSession session, String path, byte[] data) {
        inBackground(session, path, () -> Requests.touch(session, path, data), new CompletableFuture<>());
    }

    /**
     * Deletes {@code path} in {@code session}, retrying until it is gone, the session ends, or the
     * ensemble refuses for another reason (logged). Nobody needs to wait for it.
     *
     * @return completes when done, or when it stopped trying
     */
    public CompletableFuture<Void> deleteInBackground(ZkSession session, String path) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        inBackground(session, path, () -> Requests.delete(session, path), done);
        return done;
    }

    /**
     * For a create whose outcome is unknown: finds the node by its name prefix (the attempt id)
     * once the connection allows, and deletes it. Nobody waits for it.
     *
     * @return completes when done, or when it stopped trying (the session ended, or refused)
     */
    CompletableFuture<Void> forgetAttempt(ZkSession session, String prefix) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        inBackground(session, dir + "/" + prefix, () -> Requests.syncedChildren(session, dir).thenCompose(children -> {
            for (String name : children) {
                if (name.startsWith(prefix)) {
                    log.debug("deleting {}/{}, made by an abandoned create", dir, name);
                    return Requests.delete(session, dir + "/" + name);
                }
            }
            return CompletableFuture.completedFuture(null);
        }), done);
        return done;
    }

    /** Tries {@code attempt} until it succeeds or cannot any more; then completes {@code done}. */
    void inBackground(ZkSession session, String what, Supplier<CompletableFuture<Void>> attempt,
            CompletableFuture<Void> done) {
        if (!session.isAlive()) {
            done.complete(null); // whatever it was about went with the session
            return;
        }
        CompletableFuture<Void> sent;
        try {
            sent = attempt.get();
        } catch (RuntimeException e) {
            log.warn("background work on {} failed", what, e);
            done.complete(null);
            return;
        }
        sent.whenComplete((v, failure) -> {
            Code code = failure == null ? null : Requests.codeOf(failure);
            if (failure != null && code != null && Requests.passing(code) && session.isAlive()) {
                log.debug("background work on {} waits for the connection: {}", what, code);
                if (!schedule(() -> inBackground(session, what, attempt, done), BACKGROUND_RETRY_MILLIS)) {
                    done.complete(null);
                }
                return;
            }
            if (failure != null && code != Code.SESSIONEXPIRED && session.isAlive()) {
                log.warn("background work on {} failed: {}", what, failure.toString());
            }
            done.complete(null);
        });
    }

    /**
     * Creates the directory and its missing parents as {@code CONTAINER} nodes (the server removes
     * them once empty), under the retry policy.
     *
     * @return completes once it exists; fails with {@link CoordinationException} naming the chroot
     *     if the client's chroot node is missing (ZooKeeper does not create it, and a client rooted
     *     there cannot)
     */
    public CompletableFuture<Void> createDirectory(ZkSession session) {
        return createContainer(session, dir);
    }

    /**
     * Creates the directory's missing parents as {@code CONTAINER} nodes, under the retry policy,
     * leaving the directory itself to the create of its first node. A directory at the top
     * ({@code /x}) is created itself: its parent is the root, which exists unless the chroot is
     * missing, and that is reported as {@link #createDirectory} reports it.
     */
    CompletableFuture<Void> createParent(ZkSession session) {
        return parent.equals("/") ? createDirectory(session) : createContainer(session, parent);
    }

    private CompletableFuture<Void> createContainer(ZkSession session, String path) {
        return underPolicy(session, path, () -> {
            CompletableFuture<Void> done = new CompletableFuture<>();
            try {
                if (path.equals(dir)) {
                    // The directory itself, with the library's mark (see KnownDirectories): made
                    // and its data set again in one transaction.
                    session.zooKeeper().multi(List.of(
                            org.apache.zookeeper.Op.create(path, dirData, services.aclFor(path), CreateMode.CONTAINER),
                            org.apache.zookeeper.Op.setData(path, dirData, 0)), (rc, p, ctx, results) -> {
                                Code code = Code.get(rc);
                                if (code == Code.OK) {
                                    services.knownDirectories().sawMade(path, 0);
                                    done.complete(null);
                                } else if (code == Code.NODEEXISTS) {
                                    services.knownDirectories().sawExisting(path);
                                    done.complete(null);
                                } else {
                                    done.completeExceptionally(KeeperException.create(code, path));
                                }
                            }, null);
                    return done;
                }
                session.zooKeeper().create(path, new byte[0], services.aclFor(path), CreateMode.CONTAINER,
                        (rc, p, ctx, name) -> {
                            Code code = Code.get(rc);
                            if (code == Code.OK || code == Code.NODEEXISTS) {
                                services.knownDirectories().sawExisting(path);
                                done.complete(null);
                            } else {
                                done.completeExceptionally(KeeperException.create(code, path));
                            }
                        }, null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
            return done;
        }).exceptionallyCompose(failure -> {
            int slash = path.lastIndexOf('/');
            if (Requests.codeOf(failure) == Code.NOAUTH) {
                // A create is refused by its parent's ACL.
                String parent = slash == 0 ? "/" : path.substring(0, slash);
                return CompletableFuture.failedFuture(new io.zkcoord.NotAuthorizedException(parent, "create " + path
                        + " in it (needs CREATE), on the way to queueing in " + dir, failure));
            }
            if (Requests.codeOf(failure) != Code.NONODE) {
                return CompletableFuture.failedFuture(failure);
            }
            if (slash == 0) {
                // "/x" has no parent to make: the root itself is missing, which happens only when
                // the connect string names a chroot that does not exist.
                return CompletableFuture.failedFuture(new CoordinationException("cannot create " + dir
                        + ": the chroot " + services.chroot() + " of the connect string does not exist;"
                        + " create it with a client that has no chroot", failure));
            }
            return createContainer(session, path.substring(0, slash)).thenCompose(v -> createContainer(session, path));
        });
    }

    /**
     * Runs one asynchronous request in {@code session}, trying again after the policy's delay while
     * the failure is passing (connection loss). When the policy gives up, fails with {@link
     * CoordinationException} naming {@code path}, with the last {@link KeeperException} as cause;
     * when the session ends first (loss, or the client closed), fails at once with {@link
     * SessionLostException}; any other failure is passed on as it is.
     */
    <T> CompletableFuture<T> underPolicy(ZkSession session, String path, Supplier<CompletableFuture<T>> attempt) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Runnable cancel = session.onEnd(() -> result.completeExceptionally(
                new SessionLostException("session " + session + " ended; cannot continue on " + path)));
        result.whenComplete((v, failure) -> cancel.run());
        if (!result.isDone()) {
            tryOnce(path, attempt, result, 0, System.nanoTime());
        }
        return result;
    }

    private <T> void tryOnce(String path, Supplier<CompletableFuture<T>> attempt, CompletableFuture<T> result,
            int retries, long start) {
        if (result.isDone()) {
            return; // the session ended meanwhile
        }
        attempt.get().whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
                return;
            }
            Code code = Requests.codeOf(failure);
            if (code == null || !Requests.passing(code)) {
                result.completeExceptionally(failure instanceof java.util.concurrent.CompletionException
                        && failure.getCause() != null ? failure.getCause() : failure);
                return;
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            Optional<Duration> delay = services.retryPolicy().retryDelay(retries, elapsed);
            if (delay.isEmpty()) {
                result.completeExceptionally(gaveUp(path, retries + 1, elapsed, failure));
                return;
            }
            schedule(() -> tryOnce(path, attempt, result, retries + 1, start), delay.get().toMillis());
        });
    }

    CoordinationException gaveUp(String path, int tries, Duration elapsed, Throwable last) {
        Throwable cause = last instanceof java.util.concurrent.CompletionException && last.getCause() != null
                ? last.getCause() : last;
        return new CoordinationException("gave up on " + path + " after " + tries + " tries in " + elapsed.toMillis()
                + " ms under " + services.retryPolicy() + ": " + Requests.codeOf(cause), cause);
    }

    /**
     * Runs {@code task} on the scheduler after {@code millis}; drops it once the client is closed.
     *
     * @return false if dropped
     */
    boolean schedule(Runnable task, long millis) {
        try {
            services.scheduler().schedule(task, millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            log.debug("client closed; dropping a delayed step on {}", dir);
            return false;
        }
    }

    @Override
    public String toString() {
        return "QueueDirectory[" + dir + "]";
    }
}
