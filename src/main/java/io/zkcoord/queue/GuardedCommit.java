package io.zkcoord.queue;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.LockLostException;
import io.zkcoord.ZkSession;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * A write that lands only while a hold lasts: the caller's operations in one {@code multi} behind a
 * {@code check} that each of the hold's nodes still exists, sent on the hold's own session. If the
 * holder's session expired (a GC pause, a partition), its node is gone and nothing is applied,
 * whatever the holder believes. Stateless.
 */
public final class GuardedCommit {

    private GuardedCommit() {
    }

    /**
     * @param session the hold's session
     * @param nodes the hold's nodes (one for a lock or lease)
     * @param ops the caller's operations; none means a server-side check of the hold
     * @return the results of the caller's operations, in order (not the checks')
     * @throws LockLostException if a node of the hold is gone, or its session ended; nothing applied
     * @throws CoordinationException whose cause is the {@link KeeperException} (with its results) if
     *     one of the caller's operations failed; nothing applied
     * @throws CommitOutcomeUnknownException if the connection dropped before the reply
     * @throws IllegalArgumentException if {@code ops} or one of them is null
     */
    public static List<OpResult> commit(ZkSession session, List<String> nodes, Iterable<Op> ops) {
        if (ops == null) {
            throw new IllegalArgumentException("ops must not be null");
        }
        List<Op> all = new ArrayList<>();
        for (String node : nodes) {
            all.add(Op.check(node, -1));
        }
        for (Op op : ops) {
            if (op == null) {
                throw new IllegalArgumentException("ops must not contain null");
            }
            all.add(op);
        }
        if (!session.isAlive()) {
            throw new LockLostException("the session of " + nodes + " has ended; nothing applied");
        }
        CompletableFuture<List<OpResult>> reply = new CompletableFuture<>();
        try {
            session.zooKeeper().multi(all, (rc, path, ctx, results) -> {
                Code code = Code.get(rc);
                if (code == Code.OK) {
                    reply.complete(results);
                } else {
                    reply.completeExceptionally(refusal(nodes, code, results));
                }
            }, null);
        } catch (RuntimeException e) {
            throw new CoordinationException("cannot send the guarded write on " + nodes + ": " + e.getMessage(), e);
        }
        List<OpResult> results = Waits.uninterruptibly(reply);
        return new ArrayList<>(results.subList(nodes.size(), results.size()));
    }

    /** What a failed {@code multi} means, from its code and its per-operation results. */
    private static RuntimeException refusal(List<String> nodes, Code code, List<OpResult> results) {
        KeeperException e = withResults(code, results);
        if (code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT) {
            return new CommitOutcomeUnknownException("the connection dropped before the reply to the guarded write on "
                    + nodes + ": it may or may not have been applied", e);
        }
        if (code == Code.SESSIONEXPIRED || code == Code.SESSIONMOVED) {
            return new LockLostException("the session of " + nodes + " has ended; nothing applied", e);
        }
        if (results != null) {
            for (int i = 0; i < nodes.size() && i < results.size(); i++) {
                if (results.get(i) instanceof OpResult.ErrorResult err && err.getErr() != Code.OK.intValue()
                        && err.getErr() != Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return new LockLostException("the hold's node " + nodes.get(i) + " is gone; nothing applied", e);
                }
            }
        }
        return new CoordinationException("an operation of the guarded write on " + nodes + " failed (" + code
                + "); nothing applied", e);
    }

    /** A {@link KeeperException} of {@code code} carrying the per-operation results. */
    private static KeeperException withResults(Code code, List<OpResult> results) {
        KeeperException e = KeeperException.create(code);
        if (results == null) {
            return e;
        }
        // ZooKeeper sets them with a package-private method (as its own synchronous multi does);
        // the asynchronous API hands them to the callback instead.
        try {
            java.lang.reflect.Method set = KeeperException.class.getDeclaredMethod("setMultiResults", List.class);
            set.setAccessible(true);
            set.invoke(e, results);
        } catch (ReflectiveOperationException | RuntimeException ignored) {
            // no per-operation results on this ZooKeeper version: the code alone says what failed
        }
        return e;
    }
}
