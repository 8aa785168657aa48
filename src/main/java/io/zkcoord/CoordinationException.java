package io.zkcoord;

/**
 * The base exception of zkcoord: a coordination step could not be completed, for example because
 * ZooKeeper could not be reached within the client's {@link io.zkcoord.retry.RetryPolicy}.
 *
 * <p>It is unchecked, like {@link java.util.concurrent.locks.Lock#lock()}'s own failures would be.
 * When ZooKeeper reported the failure, {@link #getCause()} is the last {@link
 * org.apache.zookeeper.KeeperException} seen and the message names the path involved.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class CoordinationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message what failed, naming the path involved */
    public CoordinationException(String message) {
        super(message);
    }

    /**
     * @param message what failed, naming the path involved
     * @param cause the last error seen, usually a {@link org.apache.zookeeper.KeeperException}
     */
    public CoordinationException(String message, Throwable cause) {
        super(message, cause);
    }
}
