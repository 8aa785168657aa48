package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the queue core keeps per session of one client: the creates in flight ({@link
 * CreateWindow}), the watches ({@link SharedWatches}) and the lone holds ({@link LoneHolds}). All
 * belong to one ZooKeeper handle and go with it: a session's entry is dropped when the session
 * ends, and the next session starts with an empty window and no watch. It also keeps the client's
 * waits for a session ({@link SessionWaits}).
 *
 * <p>Thread-safe.
 */
final class QueueSessions {

    private final Map<ZkSession, Traffic> sessions = new ConcurrentHashMap<>();
    private final SessionWaits sessionWaits = new SessionWaits();

    /**
     * The queue traffic of one session.
     *
     * @param creates its creates in flight
     * @param watches its watches
     * @param loneHolds its holds that may remove their directory, each watching it
     */
    record Traffic(CreateWindow creates, SharedWatches watches, LoneHolds loneHolds) {
    }

    /** @return the queue core's per-session state of the client that {@code services} belong to */
    static QueueSessions of(ClientServices services) {
        return services.shared(QueueSessions.class, QueueSessions::new);
    }

    /** @return the client's acquisitions waiting for a session */
    SessionWaits sessionWaits() {
        return sessionWaits;
    }

    /**
     * @return the traffic of {@code session}; made on first use. For a session that has ended, a
     *     fresh one that is not kept (its requests fail anyway)
     */
    Traffic of(ZkSession session) {
        Traffic known = sessions.get(session);
        if (known != null) {
            return known;
        }
        SharedWatches watches = new SharedWatches();
        Traffic made = new Traffic(new CreateWindow(), watches, new LoneHolds(watches));
        known = sessions.putIfAbsent(session, made);
        if (known != null) {
            return known;
        }
        session.onEnd(() -> sessions.remove(session, made)); // runs at once if it has ended already
        return made;
    }
}
