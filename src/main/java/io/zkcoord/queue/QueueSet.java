package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.KnownDirectories;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
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
 * queue is read in one round trip, and every node is deleted at once. A directory the client
 * does not know to exist is made in the create's own transaction (a fresh key: one {@code multi}),
 * and a release whose last view showed no other node removes the directory in its delete's
 * ({@link DirectoryRemoval}); docs/herd-effect.md, section 14. (Rarer work is not one request:
 * missing parents are created one by one, and the search after a lost create reply is a {@code
 * sync} followed by the read.)
 *
 * <p>Thread-safe: immutable apart from the count of its running acquisitions.
 */
public final class QueueSet {

    private static final Logger log = LoggerFactory.getLogger(QueueSet.class);

    private final List<QueueDirectory> dirs;
    private final QueueDirectory first;
    /** The directories' removal with the last nodes. */
    private final DirectoryRemoval removal = new DirectoryRemoval(this);

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
            if (d.naming() != dirs.get(0).naming()) {
                throw new IllegalArgumentException("the directories of a queue set share one naming");
            }
        }
        return new QueueSet(dirs);
    }

    /** @return how the nodes of this set are named and its queues ordered (every directory's) */
    public QueueNaming naming() {
        return first.naming();
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
        byte[] owner = naming().ownerData();
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

    /**
     * Sends the creates of one attempt ({@link #create}) and, pipelined behind them, the read of
     * every queue ({@link #read}; no watch, except the children watch of a lone hold from {@code
     * loneWatch} when the create makes the one directory, see {@link LoneHolds}): the server answers
     * the read after the creates, so it sees the new nodes, and an uncontended acquisition costs one
     * round trip. If this client is making one of the directories now (another acquisition's
     * transaction is on its way), both are sent once that transaction is answered, in the order
     * asked for.
     */
    void enqueue(ZkSession in, String prefix, byte[] data, CreateReply created, ReadReply read,
            Supplier<LoneHolds.Watch> loneWatch) {
        KnownDirectories known = services().knownDirectories();
        for (QueueDirectory d : dirs) {
            if (known.waitForMaking(d.path(), prefix, () -> enqueueLater(in, prefix, data, created, read, loneWatch))) {
                return;
            }
        }
        // A create that makes the directory (a fresh key) is most likely alone: its read watches
        // the directory's children, for the lone hold it may grant (LoneHolds), at no request more.
        boolean making = dirs.size() == 1 && !known.likelyExists(first.path());
        create(in, prefix, data, created);
        LoneHolds.Watch watch = making ? loneWatch.get() : null;
        if (watch == null) {
            read(in, null, true, read);
            return;
        }
        read(in, watch.watcher(), true, (code, children, dirCzxid) -> {
            watch.answered(code);
            read.read(code, children, dirCzxid);
        });
    }

    /** {@link #enqueue} from a reply's callback: a request the client refuses fails the attempt. */
    private void enqueueLater(ZkSession in, String prefix, byte[] data, CreateReply created, ReadReply read,
            Supplier<LoneHolds.Watch> loneWatch) {
        try {
            enqueue(in, prefix, data, created, read, loneWatch);
        } catch (RuntimeException e) {
            log.warn("cannot queue in {}: {}", this, e.toString());
            created.created(Code.SYSTEMERROR, null, 0);
        }
    }

    /**
     * Sends the creates of one attempt: {@code <dir>/<prefix>} in every directory, in one
     * transaction. A directory this client does not know to exist is made in the same transaction
     * (a {@code CONTAINER} create before the node's): a fresh key costs one request. The reply's
     * code tells what to do next: {@code NODEEXISTS}, a directory was there after all (now known:
     * send again); {@code NONODE}, a directory or a parent is missing (now known: {@link
     * #createDirectories}, then send again).
     */
    void create(ZkSession in, String prefix, byte[] data, CreateReply reply) {
        KnownDirectories known = services().knownDirectories();
        List<QueueDirectory> missing = new ArrayList<>(1);
        for (QueueDirectory d : dirs) {
            if (!known.likelyExists(d.path())) {
                missing.add(d);
            }
        }
        if (dirs.size() == 1 && missing.isEmpty()) {
            String dir = first.path();
            String parent = first.parentPath();
            String node = dir + "/" + prefix;
            in.zooKeeper().create(node, data, services().aclFor(node), CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, path, ctx, name, stat) -> {
                        Code code = Code.get(rc);
                        if (code == Code.OK) {
                            known.sawExisting(parent);
                            known.sawExisting(dir);
                        } else if (code == Code.NONODE) {
                            known.sawShared(dir); // someone removed it: another client uses it too
                            known.sawGone(dir); // the next create makes it
                        }
                        reply.created(code, name == null ? null : List.of(name), stat == null ? 0 : stat.getCzxid());
                    }, null);
            return;
        }
        // Created with options so that each result carries the node's stat (the "create2" request).
        List<Op> ops = new ArrayList<>(2 * missing.size() + dirs.size());
        for (QueueDirectory d : missing) {
            // Made and its data set again in one transaction: the library's mark (see
            // KnownDirectories), by which any client knows it may remove the directory.
            ops.add(Op.create(d.path(), d.data(), services().aclFor(d.path()), CreateMode.CONTAINER));
            ops.add(Op.setData(d.path(), d.data(), 0));
        }
        for (QueueDirectory d : dirs) {
            String node = d.path() + "/" + prefix;
            CreateOptions options = CreateOptions.newBuilder(services().aclFor(node), CreateMode.EPHEMERAL_SEQUENTIAL)
                    .build();
            ops.add(Op.create(node, data, options));
        }
        int skip = 2 * missing.size();
        missing.forEach(d -> known.makingStarted(d.path(), prefix));
        try {
            in.zooKeeper().multi(ops, (rc, path, ctx, results) -> {
                try {
                    made(rc, results, missing, skip, reply);
                } finally {
                    missing.forEach(d -> known.makingAnswered(d.path()));
                }
            }, null);
        } catch (RuntimeException e) {
            missing.forEach(d -> known.makingAnswered(d.path()));
            throw e;
        }
    }

    /** The reply to a create transaction that makes directories ({@code missing}) too. */
    private void made(int rc, List<OpResult> results, List<QueueDirectory> missing, int skip, CreateReply reply) {
        KnownDirectories known = services().knownDirectories();
        Code code = Code.get(rc);
        if (code != Code.OK) {
            reply.created(learnFromFailedCreate(code, results, missing), null, 0);
            return;
        }
        List<String> paths = new ArrayList<>(dirs.size());
        long czxid = 0;
        for (int i = 0; i < dirs.size(); i++) {
            OpResult.CreateResult r = (OpResult.CreateResult) results.get(skip + i);
            // The node's name, put back under the directory as this client names it (a chroot
            // is not part of it).
            String made = r.getPath();
            paths.add(dirs.get(i).path() + made.substring(made.lastIndexOf('/')));
        }
        // One transaction, one zxid: every create in it has the same czxid. Take it from any
        // result that carries a stat: a chrooted client's asynchronous multi (ZooKeeper 3.9.4)
        // hands back the nodes' results without one.
        for (OpResult r : results) {
            if (r instanceof OpResult.CreateResult c && c.getStat() != null) {
                czxid = c.getStat().getCzxid();
                break;
            }
            if (r instanceof OpResult.SetDataResult d && d.getStat() != null) {
                czxid = d.getStat().getCzxid(); // the mark of a directory made in this transaction
                break;
            }
        }
        for (QueueDirectory d : dirs) {
            known.sawExisting(d.parentPath());
        }
        for (QueueDirectory d : missing) {
            known.sawMade(d.path(), czxid); // one transaction: the directory's czxid is the nodes'
        }
        for (QueueDirectory d : dirs) {
            known.sawExisting(d.path());
        }
        reply.created(Code.OK, paths, czxid);
    }

    /**
     * A failed create transaction names the operation that failed: remembers what it showed.
     *
     * @return the code the acquisition acts on
     */
    private Code learnFromFailedCreate(Code code, List<OpResult> results, List<QueueDirectory> missing) {
        KnownDirectories known = services().knownDirectories();
        int failed = -1;
        for (int i = 0; results != null && i < results.size(); i++) {
            if (results.get(i) instanceof OpResult.ErrorResult err && err.getErr() != Code.OK.intValue()
                    && err.getErr() != Code.RUNTIMEINCONSISTENCY.intValue()) {
                failed = i;
                break;
            }
        }
        if (failed < 0) {
            return code;
        }
        if (failed < 2 * missing.size()) {
            String dir = missing.get(failed / 2).path();
            if (code == Code.NODEEXISTS) {
                known.sawExisting(QueuePaths.parentOf(dir));
                known.sawShared(dir);
                known.sawExisting(dir); // made by someone else: the plain create will do
            } else if (code == Code.NONODE) {
                known.sawGone(QueuePaths.parentOf(dir)); // its parent is missing: made first, apart
            }
        } else if (code == Code.NONODE) {
            known.sawGone(dirs.get(failed - 2 * missing.size()).path());
        }
        return code;
    }

    /**
     * Reads every queue: {@code getChildren} (with {@code watcher}, and with the directory's stat)
     * for one directory; one {@code multi} of reads for several (with each directory's data, for
     * its stat), which can set no watch. What the stats show (the directory exists, and whether
     * it carries the library's mark; or it is gone) is remembered for the create and the release.
     *
     * @param withStat unused: every read of one directory carries its stat
     */
    void read(ZkSession in, Watcher watcher, boolean withStat, ReadReply reply) {
        KnownDirectories known = services().knownDirectories();
        if (dirs.size() == 1) {
            String dir = first.path();
            in.zooKeeper().getChildren(dir, watcher, (AsyncCallback.Children2Callback) (rc, path, ctx, children, stat) -> {
                Code code = Code.get(rc);
                if (code == Code.OK && stat != null) {
                    known.saw(dir, stat.getCzxid(),
                            KnownDirectories.isLibraryMark(stat.getVersion(), stat.getCzxid(), stat.getMzxid()),
                            stat.getCversion());
                } else if (code == Code.NONODE) {
                    known.sawGone(dir);
                }
                reply.read(code, children == null ? null : List.of(children), stat == null ? 0 : stat.getCzxid());
            }, null);
            return;
        }
        if (watcher != null) {
            throw new IllegalStateException("a multi read sets no watch: a rule over several queues names one node");
        }
        // Each directory's own data too, for its stat: whether it carries the library's mark.
        List<Op> ops = new ArrayList<>(2 * dirs.size());
        dirs.forEach(d -> ops.add(Op.getChildren(d.path())));
        dirs.forEach(d -> ops.add(Op.getData(d.path())));
        in.zooKeeper().multi(ops, (rc, path, ctx, results) -> {
            Code code = Code.get(rc);
            // A multi of reads reports its first per-operation error (a directory gone: NONODE) as
            // its code, yet answers every read.
            if (results == null || results.size() != ops.size() || (code != Code.OK && code != Code.NONODE)) {
                reply.read(code == Code.OK ? Code.SYSTEMERROR : code, null, 0);
                return;
            }
            for (int i = 0; i < dirs.size(); i++) {
                if (results.get(dirs.size() + i) instanceof OpResult.GetDataResult r && r.getStat() != null) {
                    org.apache.zookeeper.data.Stat st = r.getStat();
                    known.saw(dirs.get(i).path(), st.getCzxid(),
                            KnownDirectories.isLibraryMark(st.getVersion(), st.getCzxid(), st.getMzxid()),
                            st.getCversion());
                } else {
                    known.sawGone(dirs.get(i).path());
                }
            }
            reply.read(Code.OK, childrenOf(results.subList(0, dirs.size())), 0);
        }, null);
    }

    /** @see DirectoryRemoval#removable */
    List<String> removable(List<List<String>> lastRead, List<String> own, String gonePath) {
        return removal.removable(lastRead, own, gonePath);
    }

    /** @see DirectoryRemoval#leave */
    CompletableFuture<Void> leave(ZkSession session, List<String> paths, List<List<String>> lastRead) {
        return removal.leave(session, paths, lastRead);
    }

    /**
     * @return true while an acquisition of this client runs in one of the directories (see {@link
     *     #entered()})
     */
    boolean busy() {
        KnownDirectories known = services().knownDirectories();
        for (QueueDirectory d : dirs) {
            if (known.acquiring(d.path())) {
                return true;
            }
        }
        return false;
    }

    /**
     * An acquisition of this set started: until it ends, its nodes are, or soon will be, in the
     * directories, so no release of this client (any lock object) tries to remove them: many
     * threads on one lock object, or two lock objects on one key, would otherwise pay a failing
     * transaction at the handoff ({@link KnownDirectories#acquisitionStarted}).
     */
    void entered() {
        KnownDirectories known = services().knownDirectories();
        for (QueueDirectory d : dirs) {
            known.acquisitionStarted(d.path());
        }
    }

    /** An acquisition of this set ended (held, or not). */
    void left() {
        KnownDirectories known = services().knownDirectories();
        for (QueueDirectory d : dirs) {
            known.acquisitionEnded(d.path());
        }
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

    /**
     * After a create answered {@code NONODE}: makes what the next create cannot make itself. A
     * directory known gone whose parent is known to exist is left to the next create's
     * transaction (no request here); otherwise its missing parents are made here, one after the
     * other ({@code CONTAINER} nodes), and the directory is still left to the next create (so a
     * directory is made in the transaction of its first node whenever it can be: see {@link
     * KnownDirectories} for why that matters).
     */
    CompletableFuture<Void> createDirectories(ZkSession in) {
        KnownDirectories known = services().knownDirectories();
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (QueueDirectory d : dirs) {
            String parent = QueuePaths.parentOf(d.path());
            // The root is never taken as known: a missing root means a missing chroot, which the
            // create below reports.
            if (known.exists(d.path()) || (!parent.equals("/") && known.exists(parent))) {
                continue;
            }
            chain = chain.thenCompose(v -> d.createParent(in));
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

    /**
     * Releases a grant: deletes its nodes as {@link #release(ZkSession, List)} does; when the
     * grant names directories its release may remove ({@link Grant#removableDirs()}) and no other
     * acquisition of this client runs in them ({@link #busy}), sends one {@code multi} deleting
     * the nodes and those directories, once it knows nobody queued since the grant's view: its
     * lone holder's watch did not fire ({@link LoneHolds}), or one read of the queue shows its
     * node alone (a multi-lock sends it on its view). That transaction is all or nothing: if
     * anyone queued meanwhile it fails whole (NOTEMPTY) and the nodes are deleted alone, so
     * removing a directory never takes a node with it. Only the directories themselves are
     * removed, never a parent.
     */
    public CompletableFuture<Void> release(Grant grant) {
        return release(grant.session(), grant.paths(), grant.removableDirs());
    }

    /** As {@link #release(Grant)}, for nodes {@code paths} whose grant named {@code removableDirs}. */
    public CompletableFuture<Void> release(ZkSession session, List<String> paths, List<String> removableDirs) {
        return removal.release(session, paths, removableDirs);
    }

    /**
     * As {@link #deleteInBackground(ZkSession, List)} for a grant nobody uses (or an election
     * node): tries the removal of its directories first, as {@link #release(Grant)} does.
     */
    public CompletableFuture<Void> deleteInBackground(Grant grant) {
        return removal.deleteInBackground(grant);
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
    static CompletableFuture<Void> deleteAll(ZkSession session, List<String> paths) {
        if (paths.size() == 1) {
            return Requests.delete(session, paths.get(0));
        }
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
