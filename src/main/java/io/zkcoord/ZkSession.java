package io.zkcoord;

import io.zkcoord.retry.RetryLoop;
import io.zkcoord.retry.ZkCall;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ZooKeeper session of a {@link ZkClient}: the handle it was established on, its id, and
 * whether it is still alive. Recipes pin their work to a session: a lock node belongs to the
 * session that created it, and dies with it.
 *
 * <p>A session is alive from the moment it is established until the client reports {@link
 * ConnectionState#LOST} for it or is closed; it stays alive while merely {@link
 * ConnectionState#SUSPENDED}. Once ended it never comes back: the client builds a new {@code
 * ZkSession}.
 *
 * <p>Thread-safe.
 */
public final class ZkSession {

    private static final Logger log = LoggerFactory.getLogger(ZkSession.class);

    private final ZooKeeper zooKeeper;
    private final long id;
    private final int timeoutMillis;
    private final RetryLoop retryLoop;
    private final Executor background;
    private final Map<Object, Runnable> endHooks = new ConcurrentHashMap<>();
    private volatile boolean alive = true;

    ZkSession(ZooKeeper zooKeeper, RetryLoop retryLoop, Executor background) {
        this.zooKeeper = zooKeeper;
        this.id = zooKeeper.getSessionId();
        this.timeoutMillis = zooKeeper.getSessionTimeout();
        this.retryLoop = retryLoop;
        this.background = background;
    }

    /** @return the raw handle of this session; requests on it fail once the session has ended */
    public ZooKeeper zooKeeper() {
        return zooKeeper;
    }

    /** @return the session id, as ZooKeeper writes it into {@code ephemeralOwner} */
    public long id() {
        return id;
    }

    /** @return the session timeout the ensemble negotiated, in milliseconds */
    public int timeoutMillis() {
        return timeoutMillis;
    }

    /**
     * @return false once this session has been lost or its client closed, or once its handle has
     *     stopped (for instance when the ensemble answered that the session expired, a moment
     *     before the client's state machine reports {@link ConnectionState#LOST})
     */
    public boolean isAlive() {
        return alive && zooKeeper.getState().isAlive();
    }

    /**
     * Runs {@code call} on this session under the client's retry policy.
     *
     * @param path the znode concerned, for messages
     * @param call the call; it must be safe to repeat
     * @param <T> what the call returns
     * @return what the call returned
     * @throws SessionLostException if this session ends before the call succeeds
     * @throws CoordinationException if the retry policy gives up
     * @throws KeeperException any error that is not passing, as ZooKeeper reported it
     * @throws InterruptedException if interrupted while waiting
     */
    public <T> T call(String path, ZkCall<T> call) throws KeeperException, InterruptedException {
        return retryLoop.run(path, () -> {
            if (!isAlive()) {
                throw new SessionLostException("session 0x" + Long.toHexString(id) + " ended; cannot continue on " + path);
            }
            return zooKeeper;
        }, call);
    }

    /**
     * Registers {@code hook} to run once when this session ends. If it has already ended the hook
     * runs at once on the calling thread. Hooks run on a library thread and must be quick.
     *
     * @param hook what to run
     * @return cancels the registration; does nothing once the hook has run
     */
    public Runnable onEnd(Runnable hook) {
        Object key = new Object();
        endHooks.put(key, hook);
        if (!alive) {
            runHook(endHooks.remove(key));
        }
        return () -> endHooks.remove(key);
    }

    /**
     * Runs {@code call} in the background until it succeeds or this session ends, retrying
     * connection loss indefinitely. For clean-up that must not be forgotten (deleting a lock node
     * whose release was cut off) and that nobody waits for.
     *
     * @param path the znode concerned, for messages
     * @param call the call; it must be safe to repeat
     */
    public void callEventually(String path, ZkCall<?> call) {
        try {
            background.execute(() -> runEventually(path, call));
        } catch (RejectedExecutionException closed) {
            log.debug("client closed; dropping background work on {} (the session ends with it)", path);
        }
    }

    private void runEventually(String path, ZkCall<?> call) {
        while (alive) {
            try {
                call.call(zooKeeper);
                return;
            } catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException
                    | KeeperException.SessionMovedException e) {
                log.debug("background work on {} waits for the connection: {}", path, e.code());
            } catch (KeeperException e) {
                if (e.code() != KeeperException.Code.SESSIONEXPIRED) {
                    log.warn("background work on {} failed: {}", path, e.code());
                }
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                TimeUnit.MILLISECONDS.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Marks the session ended and runs every hook once. Called by the client only. */
    void end() {
        alive = false;
        for (Object key : endHooks.keySet()) {
            runHook(endHooks.remove(key));
        }
    }

    private static void runHook(Runnable hook) {
        if (hook == null) {
            return;
        }
        try {
            hook.run();
        } catch (RuntimeException e) {
            log.error("session end hook failed", e);
        }
    }

    @Override
    public String toString() {
        return "ZkSession[0x" + Long.toHexString(id) + (alive ? "" : ", ended") + "]";
    }
}
