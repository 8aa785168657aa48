package io.zkcoord.lock;

import io.zkcoord.ZkClient;
import io.zkcoord.queue.QueuePaths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An exclusive lock over several paths at once (move stock between two warehouses, transfer
 * between two accounts), that cannot deadlock whatever order its paths are given in and whatever
 * mix of multi-locks and single locks is used on them.
 *
 * <pre>{@code
 * ZkMultiLock both = new ZkMultiLock(client, List.of("/locks/warehouse-b", "/locks/warehouse-a"));
 * both.lock();
 * try {
 *     both.commitIfHeld(List.of(moveOut, moveIn));   // applied only while every node still exists
 * } finally {
 *     both.unlock();
 * }
 * }</pre>
 *
 * <h2>How it holds</h2>
 * One {@code multi} makes an {@code EPHEMERAL_SEQUENTIAL} node of kind {@code multi} in every
 * path's directory, in one transaction. The lock is held once that node is first in every queue; a
 * node not yet first waits on its immediate predecessor in that queue only, one queue at a time.
 * On each path it is exclusive with {@link ZkMutex}, with both sides of {@link ZkReadWriteLock}
 * and with other multi-locks: their rule counts a {@code multi} node as exclusive.
 *
 * <p><b>No deadlock, by construction.</b> A node waits only for nodes with a lower sequence number
 * in its queue. ZooKeeper appends sequence numbers in the order of transactions, and one
 * transaction made all the nodes of one multi-lock, so every node waited for was made by an
 * earlier transaction than the waiter's. Every edge of the waits-for graph points to a strictly
 * earlier zxid: the graph has no cycle, and the holder of the oldest transaction among the waiting
 * ones is never blocked. Taking locks one after the other, as other libraries do, has no such order.
 *
 * <p><b>One fencing token</b>: the nodes share one {@code czxid}, the multi's zxid. It exceeds the
 * token of every earlier holder of each path (their nodes came from earlier transactions), so one
 * number fences writes to every resource the lock guards.
 *
 * <p><b>One deadline</b> for the whole acquisition: {@code tryLock(time)} counts every queue's wait
 * within one time. Timeout, interrupt, cancel and a lost create reply (the nodes are found again
 * by their attempt id, in every directory) leave no node in any directory. The release is one
 * {@code multi} deleting every node. {@link #commitIfHeld} checks every node.
 *
 * <p>With a single path it is a mutex whose nodes have kind {@code multi}: plain {@code create},
 * {@code getChildren} and {@code delete} rather than {@code multi}s.
 *
 * <p>Everything else is {@link ZkLock}'s contract: thread holds (reentrant), leases, session loss
 * (one {@link LockLossListener} call per lost hold, with the shared token). {@link #path()} is the
 * first path as given; {@link #paths()} lists them all; a lease's {@link
 * io.zkcoord.ZkLease#nodePath()} is its node in the first path.
 *
 * <p>Thread-safe, as {@link ZkMutex}.
 */
public final class ZkMultiLock extends EngineLock implements ZkLock {

    private final List<String> paths;

    /**
     * @param client the client whose session holds the lock
     * @param paths the lock directories, e.g. {@code /locks/account-17} and {@code /locks/account-42};
     *     created on demand; in any order
     * @throws IllegalArgumentException if {@code client} or {@code paths} is null, {@code paths} is
     *     empty, holds the same path twice, or a path that {@link ZkMutex} would refuse
     */
    public ZkMultiLock(ZkClient client, Collection<String> paths) {
        this(client, validate(paths));
    }

    private ZkMultiLock(ZkClient client, List<String> paths) {
        super(new LockEngine(client, paths, NodeKind.MULTI));
        this.paths = paths;
        engine.bind(this, null);
    }

    private static List<String> validate(Collection<String> paths) {
        if (paths == null || paths.isEmpty()) {
            throw new IllegalArgumentException("a multi-lock needs at least one path");
        }
        List<String> valid = new ArrayList<>(paths.size());
        Set<String> seen = new HashSet<>();
        for (String path : paths) {
            String p = QueuePaths.validate(NodeKind.MULTI.recipe(), path);
            if (!seen.add(p)) {
                throw new IllegalArgumentException("path " + p + " is given twice");
            }
            valid.add(p);
        }
        return List.copyOf(valid);
    }

    /** @return every path of the lock, in the order given */
    public List<String> paths() {
        return paths;
    }
}
