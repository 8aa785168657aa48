package io.zkcoord;

/**
 * Told of every {@link ConnectionState} transition of a {@link ZkClient}, once and in order.
 *
 * <p>Listeners run one at a time on a thread of the library (never ZooKeeper's event thread), so
 * a listener should return quickly; a listener that throws is logged and does not stop the
 * others.
 */
@FunctionalInterface
public interface ConnectionListener {

    /** @param state the state the client has just entered */
    void stateChanged(ConnectionState state);
}
