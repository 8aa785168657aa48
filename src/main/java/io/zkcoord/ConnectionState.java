package io.zkcoord;

/**
 * What a {@link ZkClient} knows about its ZooKeeper session.
 *
 * <p>Transitions, as {@link ConnectionListener}s see them:
 * <pre>
 *  (CONNECTING) ──► CONNECTED ──► SUSPENDED ──► RECONNECTED ──► SUSPENDED ──► ...
 *                                    │                ▲
 *                                    ▼                │ (a new session)
 *                                   LOST ─────────────┘
 *   any state ──► CLOSED
 * </pre>
 * {@link #CONNECTING} is the state a client starts in; it is never reported to listeners, which
 * hear {@link #CONNECTED} once the first session is established.
 *
 * <p>An enum: immutable and safe to share between threads.
 */
public enum ConnectionState {
    /**
     * No session yet: the client was built with {@link ZkClient.Builder#start()} and has not reached
     * the ensemble. Requests wait for the first session under their own time limits.
     */
    CONNECTING,
    /**
     * The first session has been established. Reported once: before {@link
     * ZkClient.Builder#build()} returns, or when a client made by {@link ZkClient.Builder#start()}
     * first reaches the ensemble.
     */
    CONNECTED,
    /**
     * The connection to the ensemble dropped. The session may still be alive on the servers, so
     * ephemeral nodes and locks may still be held; nothing can be confirmed until the client
     * reaches a server again.
     */
    SUSPENDED,
    /**
     * Connected again: to the same session after {@link #SUSPENDED}, or to a brand-new session
     * after {@link #LOST}. {@link ZkClient#sessionId()} tells which.
     */
    RECONNECTED,
    /**
     * The session is gone: the ensemble expired it, or no server has been reached for the whole
     * negotiated session timeout, so it must be presumed expired. Every ephemeral node and every
     * lock of that session is gone; the client builds a new session by itself.
     */
    LOST,
    /** {@link ZkClient#close()} was called. Terminal. */
    CLOSED;

    /** @return true for the states in which requests can reach the ensemble */
    public boolean isConnected() {
        return this == CONNECTED || this == RECONNECTED;
    }
}
