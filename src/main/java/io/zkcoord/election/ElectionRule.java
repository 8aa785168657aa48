package io.zkcoord.election;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.QueueRule;
import io.zkcoord.queue.Turn;
import java.util.List;

/**
 * The election's pure rule, the exclusive one: the first node of the queue leads; every other node
 * watches its immediate predecessor, so one leadership change wakes exactly one participant. Every
 * node of the directory counts.
 */
final class ElectionRule implements QueueRule {

    static final ElectionRule INSTANCE = new ElectionRule();

    private ElectionRule() {
    }

    @Override
    public Turn decide(List<QueueNode> queue, QueueNode own) {
        int position = QueueRule.positionOf(queue, own);
        if (position < 0) {
            return Turn.MISSING;
        }
        return position == 0 ? Turn.HELD : new Turn.Watch(queue.get(position - 1), position == 1);
    }
}
