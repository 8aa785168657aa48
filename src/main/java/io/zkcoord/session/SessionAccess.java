package io.zkcoord.session;

import io.zkcoord.ZkSession;
import io.zkcoord.retry.RetryLoop;
import org.apache.zookeeper.ZooKeeper;

/**
 * The bridge from this package to what {@link ZkSession} keeps to its own package: making a
 * session and ending it. {@link io.zkcoord.ZkClient}'s class initialiser provides it, before any
 * client (and so any {@link SessionLifecycle}) exists. Internal: this package is not published.
 *
 * <p>Thread-safe: the maker is set once and then only read.
 */
public final class SessionAccess {

    /** Makes and ends sessions; implemented in {@code io.zkcoord}, where the session's constructor lives. */
    public interface Maker {
        /**
         * @param zooKeeper the handle the session was established on
         * @param retryLoop the client's retry loop
         * @return the session, alive
         */
        ZkSession open(ZooKeeper zooKeeper, RetryLoop retryLoop);

        /** @param session marked ended, its end hooks run once */
        void end(ZkSession session);
    }

    private static volatile Maker maker;

    private SessionAccess() {
    }

    /**
     * Called once, by {@link io.zkcoord.ZkClient}'s class initialiser.
     *
     * @param given the maker
     * @throws IllegalStateException if one was already provided
     */
    public static void provide(Maker given) {
        if (maker != null) {
            throw new IllegalStateException("already provided");
        }
        maker = given;
    }

    static ZkSession open(ZooKeeper zooKeeper, RetryLoop retryLoop) {
        return maker.open(zooKeeper, retryLoop);
    }

    static void end(ZkSession session) {
        maker.end(session);
    }
}
