package io.zkcoord.retry;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * One ZooKeeper request (or a short fixed sequence of them) that {@link RetryLoop} may run more
 * than once. It must be safe to repeat: a read, a delete that accepts {@code NONODE}, a create that
 * accepts {@code NODEEXISTS}. Sequential creates are not, and recipes recover them themselves.
 *
 * <p>Runs on the thread that called {@link io.zkcoord.ZkClient#call} or {@link
 * io.zkcoord.ZkSession#call}, never on ZooKeeper's event thread; it needs no synchronization of its
 * own unless it shares state with other threads.
 *
 * @param <T> what the call returns
 */
@FunctionalInterface
public interface ZkCall<T> {

    /**
     * @param zooKeeper the handle to use for this try
     * @return the result of the call
     * @throws KeeperException as ZooKeeper reports it
     * @throws InterruptedException if the thread is interrupted while waiting for the reply
     */
    T call(ZooKeeper zooKeeper) throws KeeperException, InterruptedException;
}
