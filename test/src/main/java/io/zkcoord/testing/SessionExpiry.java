package io.zkcoord.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;

/**
 * Expires a ZooKeeper session <em>on the server</em>, as a real expiry would: the ensemble drops
 * the session and its ephemeral nodes, and the owner learns of it ({@code Expired}) when it next
 * reaches a server.
 *
 * <p>{@code zk.getTestable().injectSessionExpiration()} (what curator-test's {@code KillSession}
 * does) is not used on purpose: it expires the session only inside the client, while the server
 * keeps it and its ephemeral nodes until its own timeout.
 */
public final class SessionExpiry {

    private SessionExpiry() {
    }

    /**
     * Expires the session of {@code zk} on the server: opens a second handle with the same session
     * id and password, waits until it is connected, and closes it, which closes the session.
     *
     * <p>Connecting the second handle makes the server drop the first handle's connection, and the
     * first handle reconnects by itself after a random pause. If it wins the race and takes the
     * session back before the close is processed, the session survives; so after each close this
     * method opens one more handle with the same id and password, and returns only once the server
     * answers that one with {@code Expired}: when it returns, the session is gone on the server.
     * The owner of {@code zk} is not waited for: it sees {@code Disconnected} and, on reconnecting,
     * {@code Expired}.
     *
     * @param zk a handle whose session is established (its id and password are read at once)
     * @param connectString where the server(s) of that session are
     * @param timeout how long the whole procedure may take
     * @throws AssertionError if the session is still alive on the server after {@code timeout},
     *     or if the calling thread is interrupted (its interrupt flag is then set again)
     * @throws UncheckedIOException if a handle cannot be created
     */
    public static void expireOnServer(ZooKeeper zk, String connectString, Duration timeout) {
        long sessionId = zk.getSessionId();
        byte[] password = zk.getSessionPasswd();
        if (sessionId == 0 || password == null) {
            throw new IllegalArgumentException("the handle has no established session: " + zk);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        int sessionTimeout = Math.max(zk.getSessionTimeout(), 2_000);
        try {
            for (int attempt = 1; ; attempt++) {
                BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
                ZooKeeper twin = new ZooKeeper(connectString, sessionTimeout, event -> {
                    if (event.getType() == EventType.None) {
                        states.add(event.getState());
                    }
                }, sessionId, password);
                try {
                    KeeperState answer = awaitAnswer(states, deadline);
                    if (answer == KeeperState.Expired) {
                        return; // the server no longer knows the session
                    }
                    if (answer == null) {
                        throw new AssertionError("session 0x" + Long.toHexString(sessionId)
                                + " still alive on the server after " + timeout.toMillis() + " ms and "
                                + attempt + " attempts at " + connectString);
                    }
                    // SyncConnected: the twin holds the session now. Closing it closes the session.
                } finally {
                    twin.close();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a second handle to " + connectString, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while expiring session 0x" + Long.toHexString(sessionId), e);
        }
    }

    /** @return SyncConnected, Expired, or null if neither came before the deadline */
    private static KeeperState awaitAnswer(BlockingQueue<KeeperState> states, long deadline)
            throws InterruptedException {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            KeeperState s = states.poll(left, TimeUnit.NANOSECONDS);
            if (s == KeeperState.SyncConnected || s == KeeperState.Expired) {
                return s;
            }
        }
    }
}
