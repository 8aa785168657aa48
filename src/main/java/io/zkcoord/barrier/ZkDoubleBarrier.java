package io.zkcoord.barrier;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.queue.QueuePaths;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.zookeeper.CreateMode;

/**
 * A double barrier: start together once {@code members} have entered; finish together once all
 * have left.
 *
 * <pre>{@code
 * ZkDoubleBarrier round = new ZkDoubleBarrier(client, "/barriers/round", 5);
 * if (round.enter(Duration.ofMinutes(1))) {     // all five are in
 *     compute();
 *     round.leave(Duration.ofMinutes(1));        // all five are done
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Members are ephemeral.</b> Each member is an {@code EPHEMERAL} node under the path: a
 *       member whose session ends counts as gone. Its node is deleted on every way {@link #enter}
 *       or {@link #leave} fails (time-out, interrupt, error).
 *   <li><b>No early pass.</b> A waiter passes only on the ensemble's word (the ready node created,
 *       the awaited member node deleted, or a read that says so); a spurious wake-up or a
 *       reconnection checks again.
 *   <li><b>Watches.</b> A waiter holds one watch. Entering: the waiters watch the ready node,
 *       which the member that completes the count makes: N waiters, N notifications. Leaving
 *       (ZooKeeper's recipe): the lowest member leaves last, watching the highest; the others
 *       delete their nodes and watch the lowest, whose deletion they all hear once.
 *   <li><b>Time limits</b> are kept: {@link #enter} and {@link #leave} return false at the limit
 *       (never loop), with this member's node removed and its watch too.
 * </ul>
 * The ready node stays from the last entry until the last member leaves; a member entering a new
 * round before the previous one has fully left passes at once.
 *
 * <p>Failures: {@link io.zkcoord.CoordinationException} when the client's retry policy gives up
 * (the member's node is removed); {@link IllegalStateException} if the client is closed, or on
 * {@link #enter} twice / {@link #leave} without entering.
 *
 * <p>Thread-safe; one object is one member.
 */
public final class ZkDoubleBarrier {

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final int members;

    // Guarded by this.
    private String mine;

    /**
     * @param client the client
     * @param path the barrier's node
     * @param members how many members fill it, at least 1
     * @throws IllegalArgumentException if {@code client} is null, {@code path} is invalid or
     *     {@code members < 1}
     */
    public ZkDoubleBarrier(ZkClient client, String path, int members) {
        this.path = QueuePaths.validate("double barrier", path);
        this.services = ClientServices.of(client);
        if (members < 1) {
            throw new IllegalArgumentException("members must be at least 1, was " + members);
        }
        this.client = client;
        this.members = members;
    }

    /**
     * Enters: makes this member's node and waits until {@code members} are in.
     *
     * @param timeout how long at most
     * @return true once all are in; false at the limit, with this member's node removed
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws IllegalStateException if this member has entered and not left
     * @throws InterruptedException if interrupted (this member's node is removed)
     */
    public boolean enter(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + Waiting.nanos(timeout);
        String name = DoubleBarrierRule.MEMBER_PREFIX + UUID.randomUUID();
        synchronized (this) {
            if (mine != null) {
                throw new IllegalStateException("this member has entered " + path + " and not left");
            }
            mine = name;
        }
        boolean passed = false;
        try {
            Nodes.create(client, node(name), CreateMode.EPHEMERAL);
            // Watch for the ready node before counting: one made after the count is still seen.
            NodeWait ready = NodeWait.untilPresent(services, node(DoubleBarrierRule.READY));
            if (DoubleBarrierRule.full(DoubleBarrierRule.members(Nodes.children(client, path)), members)) {
                Nodes.create(client, node(DoubleBarrierRule.READY), CreateMode.PERSISTENT);
            }
            passed = Waiting.awaitDone(ready, deadline);
            return passed;
        } finally {
            if (!passed) {
                Nodes.delete(client, node(name));
                synchronized (this) {
                    mine = null;
                }
            }
        }
    }

    /**
     * Leaves: removes this member and waits until every member has left.
     *
     * @param timeout how long at most
     * @return true once all have left; false at the limit (this member's node is removed)
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws IllegalStateException if this member has not entered
     * @throws InterruptedException if interrupted (this member's node is removed)
     */
    public boolean leave(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + Waiting.nanos(timeout);
        String name;
        synchronized (this) {
            if (mine == null) {
                throw new IllegalStateException("this member has not entered " + path);
            }
            name = mine;
        }
        try {
            for (;;) {
                List<String> present = DoubleBarrierRule.members(Nodes.children(client, path));
                DoubleBarrierRule.LeaveStep step = DoubleBarrierRule.leave(present, name);
                if (step.delete()) {
                    Nodes.delete(client, node(name));
                }
                if (step.waitFor().isEmpty()) {
                    Nodes.delete(client, node(DoubleBarrierRule.READY)); // the last one out
                    return true;
                }
                if (!Waiting.awaitDone(NodeWait.untilGone(services, node(step.waitFor().get())), deadline)) {
                    return false;
                }
            }
        } finally {
            Nodes.delete(client, node(name));
            synchronized (this) {
                mine = null;
            }
        }
    }

    private String node(String name) {
        return path + "/" + name;
    }

    @Override
    public String toString() {
        return "ZkDoubleBarrier[" + path + ", " + members + " members]";
    }
}
