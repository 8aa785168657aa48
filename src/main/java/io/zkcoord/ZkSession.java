package io.zkcoord;

import io.zkcoord.retry.RetryLoop;
import io.zkcoord.retry.ZkCall;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
    private final Map<Object, Runnable> endHooks = new ConcurrentHashMap<>();
    private volatile boolean alive = true;

    ZkSession(ZooKeeper zooKeeper, RetryLoop retryLoop) {
        this.zooKeeper = zooKeeper;
        this.id = zooKeeper.getSessionId();
        this.timeoutMillis = zooKeeper.getSessionTimeout();
        this.retryLoop = retryLoop;
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
     * runs at once on the calling thread. Hooks run on a library thread and must be quick; what
     * one throws (any {@link Throwable}) is logged and the other hooks still run.
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
        } catch (Throwable t) {
            // Whatever a hook throws, the other hooks still run and the client goes on.
            log.error("session end hook failed", t);
        }
    }

    @Override
    public String toString() {
        return "ZkSession[0x" + Long.toHexString(id) + (alive ? "" : ", ended") + "]";
    }
}
