package io.zkcoord.queue;

import java.util.List;

/**
 * A recipe's rule applied to several queues at once, for an acquisition that has a node in each
 * (a multi-lock): held when the rule says held in every queue; otherwise wait in the first queue,
 * in the set's order, where it does not hold, on the one node the rule names there. Pure: no I/O,
 * no state, tested without a server.
 *
 * <p>Waiting on one node at a time is enough: a node that holds in its queue keeps holding there
 * (for an exclusive rule, nodes only join behind it), so once the awaited node is gone the queues
 * where it already held need no new look. Waiting on the nodes one at a time, in any order, cannot
 * deadlock: every node waits only for nodes with a lower sequence number in its queue, which were
 * made by earlier transactions, so every wait points back in the one order of zxids and the
 * waits-for graph has no cycle (docs/herd-effect.md, section 13).
 */
final class EveryQueue {

    private EveryQueue() {
    }

    /**
     * What to do, and in which queue.
     *
     * @param queue the index of the queue the turn is about (0 when held or for one queue)
     * @param turn held (in every queue), missing (in {@code queue}), or the node to watch in
     *     {@code queue}; {@link Turn.Watch#heldWhenGone()} only if every other queue already holds
     */
    record Answer(int queue, Turn turn) {
    }

    /**
     * @param rule the recipe's rule, asked once per queue
     * @param queues every queue, in queue order, one per directory
     * @param owns our node in each queue, in the same order
     * @return the answer
     */
    static Answer decide(QueueRule rule, List<List<QueueNode>> queues, List<QueueNode> owns) {
        if (queues.size() != owns.size()) {
            throw new IllegalArgumentException(queues.size() + " queues for " + owns.size() + " nodes");
        }
        int waitIn = -1;
        Turn wait = null;
        int holding = 0;
        for (int i = 0; i < queues.size(); i++) {
            Turn turn = rule.decide(queues.get(i), owns.get(i));
            if (turn instanceof Turn.Missing) {
                return new Answer(i, Turn.MISSING); // one node gone: the whole attempt is void
            }
            if (turn instanceof Turn.Held) {
                holding++;
            } else if (wait == null) {
                waitIn = i;
                wait = turn;
            }
        }
        if (wait == null) {
            return new Answer(0, Turn.HELD);
        }
        if (wait instanceof Turn.Watch w && w.heldWhenGone() && holding < queues.size() - 1) {
            wait = new Turn.Watch(w.node(), false); // other queues still wait: look again when it goes
        }
        return new Answer(waitIn, wait);
    }
}
