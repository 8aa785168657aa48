package io.zkcoord;

/**
 * A TLS connection to the ensemble cannot work with the client's settings, and retrying would not
 * change that: {@link ZkClient.Builder#build()} throws it as soon as every server of the connect
 * string has answered so, instead of waiting out the connection timeout. {@link #problem()} says
 * what is wrong; the message says it in words, server by server, and names the setting to look
 * at. Messages never contain key-store or trust-store passwords.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class TlsConnectException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** What is wrong with the TLS connection. */
    public enum Problem {
        /** The server's certificate chain does not lead to a certificate of the client's trust store. */
        SERVER_NOT_TRUSTED,
        /**
         * The server's certificate is trusted but names another host than the one connected to
         * (host-name verification, {@code zookeeper.ssl.hostnameVerification}, is on by default).
         */
        HOST_NAME_MISMATCH,
        /**
         * The server refused the client's certificate: not signed by a CA it trusts, or none
         * configured while the server needs one ({@code ssl.clientAuth=need}).
         */
        CLIENT_CERTIFICATE_REFUSED,
        /** The port answers in plain text: a {@code clientPort}, not a {@code secureClientPort}. */
        NOT_A_TLS_PORT,
        /** The handshake failed for another reason; the message gives the server's answer. */
        HANDSHAKE_FAILED
    }

    /** What is wrong with the TLS connection. */
    private final Problem problem;

    /**
     * @param problem what is wrong
     * @param message the problem in words, naming the connect string and each server's answer
     * @param cause the handshake failure of one server, or null
     */
    public TlsConnectException(Problem problem, String message, Throwable cause) {
        super(message, cause);
        if (problem == null) {
            throw new IllegalArgumentException("problem must not be null");
        }
        this.problem = problem;
    }

    /** @return what is wrong with the TLS connection */
    public Problem problem() {
        return problem;
    }
}
