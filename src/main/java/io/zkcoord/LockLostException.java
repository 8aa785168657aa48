package io.zkcoord;

/**
 * A write guarded by a hold ({@code commitIfHeld}) was not applied because the hold is gone: its
 * node no longer exists (its session expired, or the hold was released), or the hold was already
 * known lost. Nothing of the write was applied.
 *
 * <p>Immutable and thread-safe.
 */
public class LockLostException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** @param message what was refused, naming the hold's node */
    public LockLostException(String message) {
        super(message);
    }

    /**
     * @param message what was refused, naming the hold's node
     * @param cause the {@link org.apache.zookeeper.KeeperException} of the refused {@code multi}
     */
    public LockLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
