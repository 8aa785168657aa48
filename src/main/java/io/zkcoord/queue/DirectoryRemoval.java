package io.zkcoord.queue;

import io.zkcoord.SessionLostException;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.KnownDirectories;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removing a {@link QueueSet}'s directories with their last nodes, so that a lock per entity leaves
 * nothing behind: which directories a grant may remove (what its last read showed, and what the
 * client knows of them: {@link KnownDirectories}), the release's one {@code multi} deleting the
 * nodes and those directories, sent once the release knows nobody queued since its view (its lone
 * holder's watch, {@link LoneHolds}, or one read of the queue; refused whole, {@code NOTEMPTY}, if
 * anyone queued all the same: the nodes are then deleted alone), and the one {@code delete} of a
 * directory by an acquisition that gives up last. docs/herd-effect.md, section 14, shows why no
 * interleaving loses a node.
 *
 * <p>Thread-safe: stateless apart from its set.
 */
final class DirectoryRemoval {

    private static final Logger log = LoggerFactory.getLogger(DirectoryRemoval.class);

    private final QueueSet set;

    DirectoryRemoval(QueueSet set) {
        this.set = set;
    }

    /**
     * Which directories a release of a grant decided on {@code lastRead} may remove with its
     * nodes: those where that read listed no node but ours (and {@code gonePath}, a node known
     * deleted since, or null), known to be made by the library, not a hot key of this client and
     * not contended for it ({@link KnownDirectories#removableOnGrant}). With {@code gonePath}
     * null the grant was decided on {@code lastRead} itself, just read (fresh); otherwise on an
     * older read and a watch that saw {@code gonePath} go (stale: others may have queued since).
     * A hint: the release's transaction fails whole (NOTEMPTY) if anyone queued since, the nodes
     * are then deleted alone, and the client marks the directory contended.
     */
    List<String> removable(List<List<String>> lastRead, List<String> own, String gonePath) {
        KnownDirectories known = set.services().knownDirectories();
        List<String> removable = new ArrayList<>(1);
        for (int i = 0; i < set.size() && i < lastRead.size(); i++) {
            String dir = set.get(i).path();
            boolean alone = true;
            for (String name : lastRead.get(i)) {
                String p = dir + "/" + name;
                if (!p.equals(own.get(i)) && !p.equals(gonePath)) {
                    alone = false;
                    break;
                }
            }
            if (alone && known.removableOnGrant(dir, gonePath == null)) {
                removable.add(dir);
            }
        }
        return removable;
    }

    /**
     * Deletes the nodes of an acquisition that ends without a grant (abandoned, timed out, one
     * look that did not hold), as {@link #deleteInBackground(ZkSession, List)}; then, for each
     * directory where its last read ({@code lastRead}, or null) listed no node behind ours, that
     * is known to be made by the library and not contended for this client ({@link
     * KnownDirectories#removableOnLeave}), and where no other acquisition of this client runs
     * ({@link QueueSet#busy}), sends one {@code delete} of the directory: it succeeds only if the directory is empty by then
     * (the nodes ahead of ours have left too), and fails harmlessly otherwise. That refusal does
     * not mark the directory contended: a node this acquisition saw ahead of its own, still there,
     * refuses it as well as one queued since. So a waiter that gives up last takes the directory
     * along, at the cost of that one request, and a client that gave up and then holds last still
     * removes it.
     *
     * @return completes once the nodes are deleted (or it stopped trying), as the plain deletion
     */
    CompletableFuture<Void> leave(ZkSession session, List<String> paths, List<List<String>> lastRead) {
        CompletableFuture<Void> deleted = set.deleteInBackground(session, paths);
        if (lastRead == null || set.busy()) {
            return deleted;
        }
        KnownDirectories known = set.services().knownDirectories();
        List<String> tryDirs = new ArrayList<>(1);
        for (int i = 0; i < set.size() && i < lastRead.size() && i < paths.size(); i++) {
            String dir = set.get(i).path();
            String own = paths.get(i).substring(paths.get(i).lastIndexOf('/') + 1);
            java.util.Optional<QueueNode> ours = QueueNode.parse(own);
            boolean behind = ours.isEmpty() || QueueNode.queue(lastRead.get(i)).stream()
                    .anyMatch(n -> n.sequence() > ours.get().sequence());
            if (!behind && known.removableOnLeave(dir)) {
                tryDirs.add(dir);
            }
        }
        if (!tryDirs.isEmpty()) {
            deleted.thenRun(() -> tryDirs.forEach(dir -> removeIfEmpty(session, dir)));
        }
        return deleted;
    }

    /** One {@code delete} of {@code dir}, any version: done if empty, refused (NOTEMPTY) otherwise; nobody waits. */
    private void removeIfEmpty(ZkSession session, String dir) {
        if (!session.isAlive()) {
            return;
        }
        try {
            session.zooKeeper().delete(dir, -1, (rc, p, ctx) -> {
                if (Code.get(rc) == Code.OK) {
                    set.services().knownDirectories().removed(dir);
                } else if (Code.get(rc) == Code.NONODE) {
                    set.services().knownDirectories().sawGone(dir);
                }
                // NOTEMPTY marks nothing: the nodes this acquisition saw ahead of its own may
                // simply not have gone yet, which says nothing of others queueing since.
            }, null);
        } catch (RuntimeException e) {
            log.debug("not removing {}: {}", dir, e.toString());
        }
    }

    /** One {@code multi}: every node, then every directory in {@code dirs}; on success the directories are known gone. */
    private CompletableFuture<Void> deleteWithDirs(ZkSession session, List<String> paths, List<String> dirsToRemove) {
        List<Op> ops = new ArrayList<>(paths.size() + dirsToRemove.size());
        paths.forEach(p -> ops.add(Op.delete(p, -1)));
        dirsToRemove.forEach(d -> ops.add(Op.delete(d, -1)));
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            session.zooKeeper().multi(ops, (rc, p, ctx, results) -> {
                Code code = Code.get(rc);
                if (code == Code.OK) {
                    dirsToRemove.forEach(set.services().knownDirectories()::removed);
                    done.complete(null);
                } else {
                    if (code == Code.NOTEMPTY) {
                        KnownDirectories known = set.services().knownDirectories();
                        refusedDirs(dirsToRemove, paths.size(), results).forEach(known::refused);
                    }
                    done.completeExceptionally(KeeperException.create(code, paths.get(0)));
                }
            }, null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * @return the directories a refused removal found busy (someone queued there since): the one
     *     whose delete failed NOTEMPTY, or all of them if the results do not say
     */
    private static List<String> refusedDirs(List<String> dirs, int firstDirOp, List<OpResult> results) {
        if (results != null) {
            for (int i = 0; i < dirs.size() && firstDirOp + i < results.size(); i++) {
                if (results.get(firstDirOp + i) instanceof OpResult.ErrorResult err
                        && err.getErr() == Code.NOTEMPTY.intValue()) {
                    return List.of(dirs.get(i));
                }
            }
        }
        return dirs;
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                ? c.getCause() : failure;
    }

    /**
     * Releases nodes {@code paths} whose grant named {@code removableDirs}: see {@link
     * QueueSet#release(Grant)}.
     */
    CompletableFuture<Void> release(ZkSession session, List<String> paths, List<String> removableDirs) {
        Boolean alone = loneHolds(session).released(paths.get(0));
        if (removableDirs.isEmpty() || set.busy()) {
            return set.release(session, paths);
        }
        return stillAlone(session, paths, alone).thenCompose(yes -> {
            if (yes) {
                return removeWithNodes(session, paths, removableDirs);
            }
            joined(removableDirs);
            return set.release(session, paths);
        });
    }

    /**
     * Whether the release of a grant that may remove its directory still may. True at once if the
     * hold's watch saw nobody queue ({@code watched}, from {@link LoneHolds#released}). Otherwise
     * (the watch fired, or the grant has none) one read of the one directory ({@code
     * getChildren}, no watch) answers: our node alone. (A watch that fired may have seen a waiter
     * that left since, a {@code tryLock()} that found the lock taken: the read lets the release
     * still remove the directory then.) A multi-lock, whose read sets no watch, and a read that
     * fails answer yes: the release tries the removal, which the server refuses if someone queued.
     */
    private CompletableFuture<Boolean> stillAlone(ZkSession session, List<String> paths, Boolean watched) {
        if (Boolean.TRUE.equals(watched)) {
            return CompletableFuture.completedFuture(true);
        }
        if (paths.size() != 1 || !session.isAlive()) {
            return CompletableFuture.completedFuture(true);
        }
        String node = paths.get(0);
        String own = node.substring(node.lastIndexOf('/') + 1);
        CompletableFuture<Boolean> alone = new CompletableFuture<>();
        try {
            session.zooKeeper().getChildren(set.first().path(), false, (rc, p, ctx, children) -> {
                Code code = Code.get(rc);
                alone.complete(code != Code.OK || List.of(own).equals(children));
            }, null);
        } catch (RuntimeException e) {
            alone.complete(true);
        }
        return alone;
    }

    /** @return the lone holds of {@code session} */
    private LoneHolds loneHolds(ZkSession session) {
        return QueueSessions.of(set.services()).of(session).loneHolds();
    }

    /**
     * The release's read found someone queued in {@code dirs}: the removal would have been
     * refused. Recorded as a refusal ({@link KnownDirectories#refused}): the directory is
     * contended for this client, without the refused write.
     */
    private void joined(List<String> dirs) {
        dirs.forEach(set.services().knownDirectories()::refused);
    }

    /** The release's {@code multi(delete nodes, delete dirs)}; refused whole if anyone queued: the nodes alone then. */
    private CompletableFuture<Void> removeWithNodes(ZkSession session, List<String> paths, List<String> removableDirs) {
        return set.first().underPolicy(session, paths.get(0), () -> deleteWithDirs(session, paths, removableDirs))
                .handle((v, failure) -> {
                    if (failure == null) {
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    Code code = Requests.codeOf(failure);
                    if (code != null && code != Code.SESSIONEXPIRED && !Requests.passing(code)) {
                        return set.release(session, paths); // NOTEMPTY: someone queued; the nodes alone
                    }
                    if (!session.isAlive() || code == Code.SESSIONEXPIRED
                            || unwrap(failure) instanceof SessionLostException) {
                        return CompletableFuture.<Void>completedFuture(null); // went with the session
                    }
                    set.deleteInBackground(session, paths); // the policy gave up: the nodes go later
                    return CompletableFuture.<Void>failedFuture(unwrap(failure));
                }).thenCompose(f -> f);
    }

    /**
     * As {@link #deleteInBackground(ZkSession, List)} for a grant nobody uses (or an election
     * node): tries the removal of its directories first, as {@link #release(Grant)} does.
     */
    CompletableFuture<Void> deleteInBackground(Grant grant) {
        Boolean alone = loneHolds(grant.session()).released(grant.path());
        if (grant.removableDirs().isEmpty() || set.busy()) {
            return set.deleteInBackground(grant.session(), grant.paths());
        }
        return stillAlone(grant.session(), grant.paths(), alone).thenCompose(yes -> {
            if (yes) {
                return removeInBackground(grant);
            }
            joined(grant.removableDirs());
            return set.deleteInBackground(grant.session(), grant.paths());
        });
    }

    /** {@link #deleteInBackground(Grant)} with the removal of its directories. */
    private CompletableFuture<Void> removeInBackground(Grant grant) {
        ZkSession session = grant.session();
        CompletableFuture<Void> done = new CompletableFuture<>();
        set.first().inBackground(session, String.valueOf(grant.paths()), () -> deleteWithDirs(session, grant.paths(),
                grant.removableDirs()).exceptionallyCompose(failure -> {
                    Code code = Requests.codeOf(failure);
                    return code != null && !Requests.passing(code) && code != Code.SESSIONEXPIRED
                            ? QueueSet.deleteAll(session, grant.paths()) : CompletableFuture.failedFuture(failure);
                }), done);
        return done;
    }
}
