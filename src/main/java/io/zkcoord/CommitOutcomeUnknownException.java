package io.zkcoord;

/**
 * A guarded write ({@code commitIfHeld}) was sent, but the connection dropped before its reply: it
 * may or may not have been applied (all or nothing either way). It is never retried blindly; read
 * the data to find out.
 *
 * <p>Immutable and thread-safe.
 */
public class CommitOutcomeUnknownException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was sent, naming the hold's node
     * @param cause the {@link org.apache.zookeeper.KeeperException} of the lost reply
     */
    public CommitOutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
