package io.zkcoord.session;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilding, for {@link SessionLifecycle}: a new handle after a session is lost (or a handle
 * failed before any session), retried under the client's retry policy when it cannot be made; and
 * the end on the ensemble of a session presumed lost while no server could be reached ({@link
 * StaleSession}), so that its ephemeral nodes stop blocking anyone.
 *
 * <p>Not thread-safe apart from {@link #close()}: everything else runs on the client's events thread.
 */
final class Rebuilder {

    private static final Logger log = LoggerFactory.getLogger(Rebuilder.class);

    private final SessionLifecycle lifecycle;
    private final ClientSettings settings;
    private final String name;
    /** Sessions presumed lost that may still exist on the ensemble, being ended there. */
    private final List<StaleSession> staleSessions = new CopyOnWriteArrayList<>();
    /** Events thread only. */
    private int rebuildAttempts;

    Rebuilder(SessionLifecycle lifecycle, ClientSettings settings, String name) {
        this.lifecycle = lifecycle;
        this.settings = settings;
        this.name = name;
    }

    /** Events thread. A new handle now if {@code delay} is zero, else after it. */
    void rebuildAfter(Duration delay) {
        if (delay.isZero()) {
            rebuild();
        } else {
            lifecycle.scheduler().schedule(this::rebuild, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Events thread. Makes a new handle; on failure tries again after the policy's delay. */
    private void rebuild() {
        if (lifecycle.isClosed()) {
            return;
        }
        try {
            Handle h = lifecycle.newHandle();
            lifecycle.use(h);
            if (lifecycle.isClosed()) {
                lifecycle.closeInBackground(h.zooKeeper, false); // close() ran meanwhile and closed the previous one
            }
        } catch (IOException | RuntimeException e) {
            Duration delay = settings.retryPolicy().retryDelay(rebuildAttempts++, Duration.ZERO)
                    .orElseGet(() -> {
                        rebuildAttempts = 0;
                        return Duration.ofSeconds(1);
                    });
            log.warn("{}: cannot start a new session, next try in {} ms", name, delay.toMillis(), e);
            lifecycle.scheduler().schedule(this::rebuild, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Events thread. A session was established: the next failure to rebuild starts the policy afresh. */
    void resetAttempts() {
        rebuildAttempts = 0;
    }

    /** Events thread. A session was established: each stale session may now be ended through it. */
    void sessionEstablished() {
        staleSessions.removeIf(StaleSession::isDone);
        for (StaleSession stale : staleSessions) {
            stale.newSessionEstablished(lifecycle.scheduler());
        }
    }

    /**
     * Events thread. The session of {@code h} was presumed lost while no server could be reached,
     * but the ensemble may still hold it, or restore it if it restarts: end it there as soon as it
     * is reachable, so that its ephemeral nodes stop blocking anyone (see {@link StaleSession}).
     */
    void endOnEnsembleWhenReachable(Handle h) {
        staleSessions.removeIf(StaleSession::isDone);
        try {
            StaleSession stale = new StaleSession(settings, name, h.zooKeeper.getSessionId(),
                    h.zooKeeper.getSessionPasswd(), h.session.timeoutMillis());
            staleSessions.add(stale);
            if (lifecycle.isClosed()) {
                stale.abandon(); // close() may have gone through the list before the add
            }
        } catch (IOException | RuntimeException e) {
            log.warn("{}: cannot open a handle to end session 0x{} on the ensemble; it expires there after its "
                    + "timeout", name, Long.toHexString(h.session.id()), e);
        }
    }

    /** Any thread, once: the client closes; stale sessions are left to expire on the ensemble. */
    void close() {
        for (StaleSession stale : staleSessions) {
            stale.abandon();
        }
    }
}
