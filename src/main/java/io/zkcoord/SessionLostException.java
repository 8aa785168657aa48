package io.zkcoord;

/**
 * The ZooKeeper session an operation depended on has ended (expired, presumed expired after a
 * partition, or closed), so every ephemeral node of that session, and every lock it held, is gone.
 *
 * <p>Recipes catch it to start again in the client's new session; users see it only where a
 * contract says so. Immutable and safe to share between threads.
 */
public class SessionLostException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** @param message what was being done, naming the path involved */
    public SessionLostException(String message) {
        super(message);
    }

    /**
     * @param message what was being done, naming the path involved
     * @param cause the error that revealed the loss
     */
    public SessionLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
