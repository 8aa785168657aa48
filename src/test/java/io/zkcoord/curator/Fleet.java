package io.zkcoord.curator;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The clients of a mixed fleet: Curator's, each in its own session, and ours. Closes them all.
 * Not thread-safe: made and closed by the test's thread.
 */
final class Fleet implements AutoCloseable {

    /** What one party of a fleet runs. */
    enum Side {
        /** Apache Curator's recipe. */
        CURATOR_LIBRARY,
        /** zkcoord with {@link Protocol#CURATOR}. */
        ZKCOORD_AS_CURATOR,
        /** zkcoord with {@link Protocol#ZKCOORD}. */
        ZKCOORD;

        Protocol protocol() {
            return this == ZKCOORD ? Protocol.ZKCOORD : Protocol.CURATOR;
        }
    }

    static final Duration SESSION = Duration.ofSeconds(10);

    private final String connect;
    private final List<AutoCloseable> open = new ArrayList<>();

    Fleet(String connect) {
        this.connect = connect;
    }

    /** @return a started Curator client in a session of its own */
    CuratorFramework curator() throws InterruptedException {
        return curator(connect);
    }

    /** @return a started Curator client of {@code connectString} in a session of its own */
    CuratorFramework curator(String connectString) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connectString, (int) SESSION.toMillis(), 5_000,
                new ExponentialBackoffRetry(20, 10, 500));
        c.start();
        open.add(c);
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Curator client did not connect to " + connectString);
        }
        return c;
    }

    /** @return a zkcoord client in a session of its own */
    ZkClient zkcoord() {
        return zkcoord(connect);
    }

    /** @return a zkcoord client of {@code connectString} in a session of its own */
    ZkClient zkcoord(String connectString) {
        ZkClient c = ZkClient.builder().connectString(connectString).sessionTimeout(SESSION).build();
        open.add(c);
        return c;
    }

    /** @return a lock of {@code side} on {@code path}, in a session of its own */
    Party mutex(Side side, String path, String name) throws Exception {
        if (side == Side.CURATOR_LIBRARY) {
            CuratorFramework c = curator();
            InterProcessMutex m = new InterProcessMutex(c, path);
            return new Party(name, side, c.getZookeeperClient().getZooKeeper().getSessionId(), m::acquire, () -> {
                try {
                    m.release();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, () -> -1, c);
        }
        ZkClient z = zkcoord();
        ZkMutex m = new ZkMutex(z, path, side.protocol());
        return new Party(name, side, z.session().id(), m::lock, m::unlock, m::fencingToken, z);
    }

    /** Closes a client of this fleet now (its session ends), rather than at the end. */
    void close(AutoCloseable client) throws Exception {
        open.remove(client);
        client.close();
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        open.clear();
        if (first != null) {
            throw first;
        }
    }

    /**
     * One exclusive party: its name, side and session, how it locks and unlocks, its fencing token
     * while it holds (-1 for Curator, which has none), and its client.
     */
    record Party(String name, Side side, long sessionId, Locking lock, Runnable unlock,
            java.util.function.LongSupplier token, AutoCloseable client) {
    }

    /** A lock call that may throw anything (Curator's throws Exception). */
    @FunctionalInterface
    interface Locking {
        void lock() throws Exception;
    }
}
