package io.zkcoord.barrier;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.queue.QueuePaths;
import java.time.Duration;
import org.apache.zookeeper.CreateMode;

/**
 * A barrier: raised, processes wait; removed, they all pass. The barrier is one persistent node.
 *
 * <pre>{@code
 * ZkBarrier gate = new ZkBarrier(client, "/barriers/deploy");
 * gate.set();                                   // raise it
 * boolean passed = gate.await(Duration.ofMinutes(5));   // elsewhere: wait for its removal
 * gate.remove();                                // every waiter passes
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>{@link #set()} and {@link #remove()} are idempotent (a lost reply is retried safely).
 *   <li>A waiter passes only on the ensemble's word that the node is gone (its deletion event, or
 *       a read); any other wake-up checks again. Removing a barrier that N waiters (in N sessions)
 *       wait on costs N notifications; each waiter holds one watch, and one whose time runs out
 *       removes it.
 * </ul>
 * Failures: {@link io.zkcoord.CoordinationException} when the client's retry policy gives up;
 * {@link IllegalStateException} when the client is closed.
 *
 * <p>Thread-safe.
 */
public final class ZkBarrier {

    private final ZkClient client;
    private final ClientServices services;
    private final String path;

    /**
     * @param client the client
     * @param path the barrier's node
     * @throws IllegalArgumentException if {@code client} is null or {@code path} is invalid
     */
    public ZkBarrier(ZkClient client, String path) {
        this.path = QueuePaths.validate("barrier", path);
        this.services = ClientServices.of(client);
        this.client = client;
    }

    /** Raises the barrier (makes its node, parents too); nothing if it is raised. */
    public void set() {
        Nodes.create(client, path, CreateMode.PERSISTENT);
    }

    /** Removes the barrier: every waiter passes; nothing if it is not raised. */
    public void remove() {
        Nodes.delete(client, path);
    }

    /**
     * Waits until no barrier is raised.
     *
     * @param timeout how long at most; the first look is taken even when it is zero (at most 1 s
     *     when the ensemble is slow to answer), returning within the timeout otherwise (plus at
     *     most 200 ms to remove the watch)
     * @return true once there is no barrier (at once if there is none); false if the time ran out
     *     (the watch is removed)
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws InterruptedException if interrupted (the watch is removed)
     */
    public boolean await(Duration timeout) throws InterruptedException {
        long nanos = Waiting.nanos(timeout);
        return Waiting.awaitDone(NodeWait.untilGone(services, path), System.nanoTime() + nanos);
    }

    @Override
    public String toString() {
        return "ZkBarrier[" + path + "]";
    }
}
