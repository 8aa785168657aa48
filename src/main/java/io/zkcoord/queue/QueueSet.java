package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directories one {@link Acquisition} queues in: one for every recipe, several for a
 * multi-lock. The create, the read of the queues and the release are each one request whatever
 * the number of directories: one directory gets the plain calls ({@code create}, {@code
 * getChildren}, {@code delete}); several get one {@code multi} each time, so a node is made in
 * every directory in one transaction (one zxid: every node has the same {@code czxid}), every
 * queue is read in one round trip, and every node is deleted at once. (Rarer work is not: missing
 * directories are created one by one, and the search after a lost create reply is a {@code sync}
 * followed by the read.)
 *
 * <p>Immutable and thread-safe.
 */
public final class QueueSet {

    private static final Logger log = LoggerFactory.getLogger(QueueSet.class);

    private final List<QueueDirectory> dirs;
    private final QueueDirectory first;

    private QueueSet(List<QueueDirectory> dirs) {
        this.dirs = List.copyOf(dirs);
        this.first = this.dirs.get(0);
    }

    /**
     * @param dirs the directories, at least one, no two with the same path, all of one client
     * @throws IllegalArgumentException otherwise
     */
    public static QueueSet of(List<QueueDirectory> dirs) {
        if (dirs == null || dirs.isEmpty()) {
            throw new IllegalArgumentException("a queue set has at least one directory");
        }
        HashSet<String> paths = new HashSet<>();
        for (QueueDirectory d : dirs) {
            if (!paths.add(d.path())) {
                throw new IllegalArgumentException("directory " + d.path() + " is given twice");
            }
            if (d.services() != dirs.get(0).services()) {
                throw new IllegalArgumentException("the directories of a queue set belong to one client");
            }
        }
        return new QueueSet(dirs);
    }

    /** @return the number of directories */
    public int size() {
        return dirs.size();
    }

    /** @return the first directory (whose node's path a grant names first) */
    public QueueDirectory first() {
        return first;
    }

    /** @return the directory at {@code index} */
    QueueDirectory get(int index) {
        return dirs.get(index);
    }

    /** @return the directories' paths, in order */
    public List<String> paths() {
        List<String> paths = new ArrayList<>(dirs.size());
        dirs.forEach(d -> paths.add(d.path()));
        return paths;
    }

    public ClientServices services() {
        return first.services();
    }

    /**
     * Starts an acquisition: a node of {@code kind} in every directory, made in one transaction,
     * held when {@code rule} says held in every queue.
     *
     * @see QueueDirectory#acquire(String, QueueRule, boolean)
     */
    public Acquisition acquire(String kind, QueueRule rule, boolean oneLook) {
        byte[] owner = OwnerInfo.ofCurrentThread();
        if (dirs.size() > 1) {
            // Every node names the other directories, so that an operator reading one of them
            // (zkCli, the Inspector) sees what else the holder waits for.
            owner = (new String(owner, java.nio.charset.StandardCharsets.UTF_8) + " paths=" + String.join(",", paths()))
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        return acquire(kind, rule, oneLook, owner);
    }

    /** As {@link #acquire(String, QueueRule, boolean)}, with the nodes' data given. */
    public Acquisition acquire(String kind, QueueRule rule, boolean oneLook, byte[] data) {
        Acquisition a = new Acquisition(this, kind, rule, oneLook, data.clone());
        a.start();
        return a;
    }

    // ------------------------------------------------------------------ the acquisition's requests

    /** The reply to {@link #create}: the nodes made (one per directory, in order) and their czxid. */
    interface CreateReply {
        void created(Code code, List<String> paths, long czxid);
    }

    /** The reply to {@link #read}: every directory's children (none for a missing directory). */
    interface ReadReply {
        void read(Code code, List<List<String>> children, long dirCzxid);
    }

    /** Sends the creates of one attempt: {@code <dir>/<prefix>} in every directory, in one transaction. */
    void create(ZkSession in, String prefix, byte[] data, CreateReply reply) {
        if (dirs.size() == 1) {
            String node = first.path() + "/" + prefix;
            in.zooKeeper().create(node, data, services().aclFor(node), CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, path, ctx, name, stat) -> reply.created(Code.get(rc),
                            name == null ? null : List.of(name), stat == null ? 0 : stat.getCzxid()), null);
            return;
        }
        // Created with options so that each result carries the node's stat (the "create2" request).
        List<Op> ops = new ArrayList<>(dirs.size());
        for (QueueDirectory d : dirs) {
            String node = d.path() + "/" + prefix;
            CreateOptions options = CreateOptions.newBuilder(services().aclFor(node), CreateMode.EPHEMERAL_SEQUENTIAL)
                    .build();
            ops.add(Op.create(node, data, options));
        }
        in.zooKeeper().multi(ops, (rc, path, ctx, results) -> {
            Code code = Code.get(rc);
            if (code != Code.OK) {
                reply.created(code, null, 0);
                return;
            }
            List<String> paths = new ArrayList<>(dirs.size());
            long czxid = 0;
            for (int i = 0; i < dirs.size(); i++) {
                OpResult.CreateResult r = (OpResult.CreateResult) results.get(i);
                // The node's name, put back under the directory as this client names it (a chroot
                // is not part of it).
                String made = r.getPath();
                paths.add(dirs.get(i).path() + made.substring(made.lastIndexOf('/')));
                if (r.getStat() != null) {
                    czxid = r.getStat().getCzxid();
                }
            }
            reply.created(Code.OK, paths, czxid);
        }, null);
    }

    /**
     * Reads every queue: {@code getChildren} (with {@code watcher}, and with the directory's stat
     * when {@code withStat}) for one directory; one {@code multi} of reads for several, which can
     * set no watch.
     */
    void read(ZkSession in, Watcher watcher, boolean withStat, ReadReply reply) {
        if (dirs.size() == 1) {
            String dir = first.path();
            if (!withStat) {
                in.zooKeeper().getChildren(dir, watcher, (AsyncCallback.ChildrenCallback) (rc, path, ctx, children) ->
                        reply.read(Code.get(rc), children == null ? null : List.of(children), 0), null);
            } else {
                in.zooKeeper().getChildren(dir, watcher, (AsyncCallback.Children2Callback) (rc, path, ctx, children, stat) ->
                        reply.read(Code.get(rc), children == null ? null : List.of(children),
                                stat == null ? 0 : stat.getCzxid()), null);
            }
            return;
        }
        if (watcher != null) {
            throw new IllegalStateException("a multi read sets no watch: a rule over several queues names one node");
        }
        List<Op> ops = new ArrayList<>(dirs.size());
        dirs.forEach(d -> ops.add(Op.getChildren(d.path())));
        in.zooKeeper().multi(ops, (rc, path, ctx, results) -> {
            Code code = Code.get(rc);
            // A multi of reads reports its first per-operation error (a directory gone: NONODE) as
            // its code, yet answers every read.
            if (results == null || results.size() != dirs.size() || (code != Code.OK && code != Code.NONODE)) {
                reply.read(code == Code.OK ? Code.SYSTEMERROR : code, null, 0);
                return;
            }
            reply.read(Code.OK, childrenOf(results), 0);
        }, null);
    }

    private static List<List<String>> childrenOf(List<OpResult> results) {
        List<List<String>> all = new ArrayList<>(results.size());
        for (OpResult r : results) {
            all.add(r instanceof OpResult.GetChildrenResult c ? c.getChildren() : List.of());
        }
        return all;
    }

    /**
     * Brings the server up to date with the leader, then reads every queue (without watches): for
     * finding the nodes of a create whose reply was lost.
     */
    CompletableFuture<List<List<String>>> syncedRead(ZkSession in) {
        if (dirs.size() == 1) {
            return Requests.syncedChildren(in, first.path()).thenApply(List::of);
        }
        in.zooKeeper().sync(first.path(), (rc, p, ctx) -> { }, null);
        List<Op> ops = new ArrayList<>(dirs.size());
        dirs.forEach(d -> ops.add(Op.getChildren(d.path())));
        return Requests.multi(in, ops).thenApply(QueueSet::childrenOf);
    }

    /** Creates every directory that is missing, one after the other. */
    CompletableFuture<Void> createDirectories(ZkSession in) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (QueueDirectory d : dirs) {
            chain = chain.thenCompose(v -> d.createDirectory(in));
        }
        return chain;
    }

    // ------------------------------------------------------------------ deleting nodes

    /**
     * Deletes a hold's nodes under the retry policy: one {@code delete} for one node, one {@code
     * multi} for several. Completes when all are gone (or went with the session); if the policy
     * gives up, fails with {@link io.zkcoord.CoordinationException} and the deletion goes on in the
     * background until the connection returns or the session ends.
     */
    public CompletableFuture<Void> release(ZkSession session, List<String> paths) {
        if (paths.size() <= 1 || dirs.size() == 1) {
            return first.release(session, paths);
        }
        return first.underPolicy(session, paths.get(0), () -> deleteAll(session, paths)).exceptionallyCompose(failure -> {
            if (!session.isAlive() || Requests.codeOf(failure) == Code.SESSIONEXPIRED
                    || (failure instanceof java.util.concurrent.CompletionException c ? c.getCause() : failure)
                            instanceof io.zkcoord.SessionLostException) {
                return CompletableFuture.completedFuture(null); // the nodes went with the session
            }
            deleteInBackground(session, paths);
            return CompletableFuture.failedFuture(failure);
        });
    }

    /** Deletes {@code paths} in {@code session} in the background, retrying until done or the session ends. */
    public CompletableFuture<Void> deleteInBackground(ZkSession session, List<String> paths) {
        if (paths.size() == 1) {
            return first.deleteInBackground(session, paths.get(0));
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        first.inBackground(session, String.valueOf(paths), () -> deleteAll(session, paths), done);
        return done;
    }

    /**
     * One {@code multi} deleting every node; if one is gone already (the multi then applies
     * nothing), each of the others is deleted on its own.
     */
    private static CompletableFuture<Void> deleteAll(ZkSession session, List<String> paths) {
        List<Op> ops = new ArrayList<>(paths.size());
        paths.forEach(p -> ops.add(Op.delete(p, -1)));
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            session.zooKeeper().multi(ops, (rc, p, ctx, results) -> {
                Code code = Code.get(rc);
                if (code == Code.OK) {
                    done.complete(null);
                } else if (code == Code.NONODE) {
                    CompletableFuture<?>[] each = paths.stream().map(path -> Requests.delete(session, path))
                            .toArray(CompletableFuture[]::new);
                    CompletableFuture.allOf(each).whenComplete((v, e) -> {
                        if (e == null) {
                            done.complete(null);
                        } else {
                            done.completeExceptionally(e);
                        }
                    });
                } else {
                    done.completeExceptionally(KeeperException.create(code, paths.get(0)));
                }
            }, null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * For a create whose outcome is unknown: finds the attempt's nodes by their name prefix in
     * every directory once the connection allows, and deletes them. Nobody waits for it.
     */
    CompletableFuture<Void> forgetAttempt(ZkSession session, String prefix) {
        if (dirs.size() == 1) {
            return first.forgetAttempt(session, prefix);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        first.inBackground(session, paths() + "/" + prefix, () -> syncedRead(session).thenCompose(children -> {
            List<String> found = find(children, prefix);
            if (found.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            log.debug("deleting {}, made by an abandoned create", found);
            return deleteAll(session, found);
        }), done);
        return done;
    }

    /** @return the full paths of the nodes named {@code prefix...} in {@code children} (one list per directory) */
    List<String> find(List<List<String>> children, String prefix) {
        List<String> found = new ArrayList<>();
        for (int i = 0; i < dirs.size() && i < children.size(); i++) {
            for (String name : children.get(i)) {
                if (name.startsWith(prefix)) {
                    found.add(dirs.get(i).path() + "/" + name);
                }
            }
        }
        return found;
    }

    @Override
    public String toString() {
        return dirs.size() == 1 ? first.path() : paths().toString();
    }
}
