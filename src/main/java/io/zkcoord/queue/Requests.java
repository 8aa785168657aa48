package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper's asynchronous calls as futures, on one session. A future fails with the {@link
 * KeeperException} of the reply; it completes on ZooKeeper's event thread, so what depends on it
 * must be quick and must not block. Stateless.
 */
public final class Requests {

    private Requests() {
    }

    /** @return true for the codes after which the same request may succeed on the same session */
    static boolean passing(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT || code == Code.SESSIONMOVED;
    }

    /** @return true if a create with this outcome may have made its node though the reply says otherwise */
    static boolean outcomeUnknown(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT;
    }

    /** Deletes {@code path}, any version; a node already gone counts as deleted. */
    static CompletableFuture<Void> delete(ZkSession session, String path) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        AsyncCallback.VoidCallback callback = (rc, p, ctx) -> {
            Code code = Code.get(rc);
            if (code == Code.OK || code == Code.NONODE) {
                done.complete(null);
            } else {
                done.completeExceptionally(KeeperException.create(code, path));
            }
        };
        send(done, () -> session.zooKeeper().delete(path, -1, callback, null));
        return done;
    }

    /** Sets {@code data} on {@code path}, any version; a node already gone counts as done. */
    static CompletableFuture<Void> touch(ZkSession session, String path, byte[] data) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        AsyncCallback.StatCallback callback = (rc, p, ctx, stat) -> {
            Code code = Code.get(rc);
            if (code == Code.OK || code == Code.NONODE) {
                done.complete(null);
            } else {
                done.completeExceptionally(KeeperException.create(code, path));
            }
        };
        send(done, () -> session.zooKeeper().setData(path, data, -1, callback, null));
        return done;
    }

    /**
     * A node's data and the zxid that created it.
     *
     * @param bytes its data, never null
     * @param czxid the zxid of its creation
     */
    public record Data(byte[] bytes, long czxid) {
    }

    /** @return the data of {@code path} with its czxid, or null if it does not exist */
    static CompletableFuture<Data> data(ZkSession session, String path) {
        CompletableFuture<Data> done = new CompletableFuture<>();
        AsyncCallback.DataCallback callback = (rc, p, ctx, bytes, stat) -> {
            Code code = Code.get(rc);
            if (code == Code.OK) {
                done.complete(new Data(bytes == null ? new byte[0] : bytes, stat.getCzxid()));
            } else if (code == Code.NONODE) {
                done.complete(null);
            } else {
                done.completeExceptionally(KeeperException.create(code, path));
            }
        };
        send(done, () -> session.zooKeeper().getData(path, false, callback, null));
        return done;
    }

    /** Runs a {@code multi} of reads; each result is a GetDataResult or an ErrorResult (node gone). */
    static CompletableFuture<List<org.apache.zookeeper.OpResult>> multi(ZkSession session,
            List<org.apache.zookeeper.Op> ops) {
        CompletableFuture<List<org.apache.zookeeper.OpResult>> done = new CompletableFuture<>();
        AsyncCallback.MultiCallback callback = (rc, p, ctx, results) -> {
            Code code = Code.get(rc);
            // A multi of reads reports its first per-operation error (a node gone: NONODE) as its
            // code, yet answers every read: the caller reads the ErrorResults.
            if (code == Code.OK || (results != null && results.size() == ops.size() && code == Code.NONODE)) {
                done.complete(results);
            } else {
                done.completeExceptionally(KeeperException.create(code, p));
            }
        };
        send(done, () -> session.zooKeeper().multi(ops, callback, null));
        return done;
    }

    /** @return the children of {@code dir}, without a watch; none if it does not exist */
    static CompletableFuture<List<String>> children(ZkSession session, String dir) {
        CompletableFuture<List<String>> done = new CompletableFuture<>();
        AsyncCallback.ChildrenCallback callback = (rc, p, ctx, children) -> {
            Code code = Code.get(rc);
            if (code == Code.OK) {
                done.complete(children);
            } else if (code == Code.NONODE) {
                done.complete(List.of());
            } else {
                done.completeExceptionally(KeeperException.create(code, dir));
            }
        };
        send(done, () -> session.zooKeeper().getChildren(dir, false, callback, null));
        return done;
    }

    /**
     * Brings the server up to date with the leader for {@code dir}, then reads its children: the
     * two requests are sent back to back, and the server answers a session's requests in order.
     * For finding a node whose create reply was lost (the create may not have reached this server).
     */
    static CompletableFuture<List<String>> syncedChildren(ZkSession session, String dir) {
        session.zooKeeper().sync(dir, (rc, p, ctx) -> { }, null);
        return children(session, dir);
    }

    /** @return the node's stat, or null if it does not exist */
    static CompletableFuture<Stat> exists(ZkSession session, String path) {
        CompletableFuture<Stat> done = new CompletableFuture<>();
        AsyncCallback.StatCallback callback = (rc, p, ctx, stat) -> {
            Code code = Code.get(rc);
            if (code == Code.OK || code == Code.NONODE) {
                done.complete(stat);
            } else {
                done.completeExceptionally(KeeperException.create(code, path));
            }
        };
        send(done, () -> session.zooKeeper().exists(path, false, callback, null));
        return done;
    }

    /** Sends a request; a request the client refuses at once (bad path) fails the future. */
    private static void send(CompletableFuture<?> done, Runnable request) {
        try {
            request.run();
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    /** @return the ZooKeeper code of a failure, or null if it is not a {@link KeeperException} */
    static Code codeOf(Throwable failure) {
        Throwable t = failure;
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof KeeperException ke ? ke.code() : null;
    }
}
