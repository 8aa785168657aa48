package io.zkcoord.queue;

import java.util.List;

/**
 * A recipe's pure decision: given the whole queue, does {@code own} hold, and if not, which single
 * node must it watch? No I/O, no state: unit-tested without a server. The rule must name a node
 * whose deletion (or change) is the only event that can change its answer, so that one watch per
 * waiter is enough and a release wakes only the waiters it concerns.
 */
@FunctionalInterface
public interface QueueRule {

    /**
     * @param queue every queue node of the directory, in queue order ({@link QueueNode#QUEUE_ORDER})
     * @param own the caller's node
     * @return {@link Turn#HELD}, a {@link Turn.Watch}, or {@link Turn#MISSING} if {@code own} is not
     *     in {@code queue}
     */
    Turn decide(List<QueueNode> queue, QueueNode own);

    /**
     * Whether a node that comes to hold must tell the node behind it (when the read that granted it
     * lists one: that node may have read the queue while ours still waited). For a rule
     * whose waiters watch their predecessor while it waits, and must look again once it holds
     * (a semaphore: the next waiter then becomes first and takes over the watch of the queue).
     * The core then rewrites the node's data once (a "promotion"), which fires the successor's
     * watch; a successor that sets its watch later sees the data version above 0 and looks again.
     * Default false: a lock's waiters care only about their predecessor leaving.
     */
    default boolean announcesPromotion() {
        return false;
    }

    /** @return the position of {@code own} in {@code queue}, or -1 */
    static int positionOf(List<QueueNode> queue, QueueNode own) {
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).name().equals(own.name())) {
                return i;
            }
        }
        return -1;
    }
}
