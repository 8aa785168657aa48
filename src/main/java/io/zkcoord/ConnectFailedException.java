package io.zkcoord;

/**
 * {@link ZkClient.Builder#build()} established no session within the connection timeout. {@link
 * #problem()} says why, as far as the client could tell by then; the message says it in words,
 * server by server (a connect string with a bad syntax never gets here: its setter throws {@link
 * IllegalArgumentException} at once).
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class ConnectFailedException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** What kept the client from a session, from the most to the least telling. */
    public enum Problem {
        /**
         * A server accepted the connection, but the session the client asked for cannot be had
         * with its settings: the session timeout is too short for ZooKeeper's client to complete
         * the handshake (it gives each attempt the session timeout divided by the number of
         * servers), or the server rejected the authentication.
         */
        SETTING_REFUSED,
        /**
         * No session in time, for want of an answer: a server accepted the connection but said
         * nothing (a network dropping packets, an overloaded or stopped-but-listening process, or
         * not a ZooKeeper client port: a TLS port without TLS settings, another service), or
         * connections neither succeeded nor were refused.
         */
        TIMEOUT,
        /** No server accepted a connection, and at least one refused it (nothing listens on its port). */
        CONNECTION_REFUSED,
        /** No server name of the connect string resolves to an address. */
        UNKNOWN_HOST
    }

    /** What kept the client from a session. */
    private final Problem problem;

    /**
     * @param problem what kept the client from a session
     * @param message the problem in words, naming the connect string and each server's answer
     * @param cause the last error seen, or null
     */
    public ConnectFailedException(Problem problem, String message, Throwable cause) {
        super(message, cause);
        if (problem == null) {
            throw new IllegalArgumentException("problem must not be null");
        }
        this.problem = problem;
    }

    /** @return what kept the client from a session */
    public Problem problem() {
        return problem;
    }
}
