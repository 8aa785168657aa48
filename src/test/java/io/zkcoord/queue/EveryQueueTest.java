package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule over several queues, without a server: held only when held everywhere; one node to wait on. */
class EveryQueueTest {

    /** An exclusive rule: first holds, others watch their predecessor (the only blocker when second). */
    private static final QueueRule EXCLUSIVE = (queue, own) -> {
        int p = QueueRule.positionOf(queue, own);
        return p < 0 ? Turn.MISSING : p == 0 ? Turn.HELD : new Turn.Watch(queue.get(p - 1), p == 1);
    };

    private static QueueNode node(String kind, long seq) {
        return new QueueNode(kind + "-a-" + String.format("%010d", seq), kind, "a", seq);
    }

    private static List<QueueNode> queue(QueueNode... nodes) {
        List<QueueNode> q = new ArrayList<>(List.of(nodes));
        q.sort(QueueNode.QUEUE_ORDER);
        return q;
    }

    @Test
    void heldWhenFirstInEveryQueue() {
        QueueNode a = node("multi", 5);
        QueueNode b = node("multi", 9);
        EveryQueue.Answer answer = EveryQueue.decide(EXCLUSIVE, List.of(queue(a), queue(b, node("lock", 12))), List.of(a, b));
        assertEquals(Turn.HELD, answer.turn());
    }

    @Test
    void waitsInTheFirstQueueWhereItDoesNotHold() {
        QueueNode a = node("multi", 5);
        QueueNode b = node("multi", 9);
        QueueNode c = node("multi", 3);
        QueueNode blockerB = node("lock", 4);
        QueueNode blockerC = node("write", 1);
        EveryQueue.Answer answer = EveryQueue.decide(EXCLUSIVE,
                List.of(queue(a), queue(blockerB, b), queue(blockerC, node("read", 2), c)), List.of(a, b, c));
        assertEquals(1, answer.queue());
        // Another queue (the third) still blocks: the deletion of blockerB alone does not mean held.
        assertEquals(new Turn.Watch(blockerB, false), answer.turn());
    }

    @Test
    void heldWhenGoneOnlyIfEveryOtherQueueHolds() {
        QueueNode a = node("multi", 5);
        QueueNode b = node("multi", 9);
        QueueNode blocker = node("lock", 4);
        EveryQueue.Answer answer = EveryQueue.decide(EXCLUSIVE, List.of(queue(a), queue(blocker, b)), List.of(a, b));
        assertEquals(new EveryQueue.Answer(1, new Turn.Watch(blocker, true)), answer);
    }

    @Test
    void missingInAnyQueueVoidsTheAttempt() {
        QueueNode a = node("multi", 5);
        QueueNode b = node("multi", 9);
        EveryQueue.Answer answer = EveryQueue.decide(EXCLUSIVE, List.of(queue(node("lock", 1), a), queue()), List.of(a, b));
        assertEquals(new EveryQueue.Answer(1, Turn.MISSING), answer);
    }

    @Test
    void oneQueueIsTheRuleItself() {
        QueueNode a = node("lock", 5);
        QueueNode before = node("lock", 2);
        assertEquals(new EveryQueue.Answer(0, new Turn.Watch(before, true)),
                EveryQueue.decide(EXCLUSIVE, List.of(queue(before, a)), List.of(a)));
        assertEquals(new EveryQueue.Answer(0, Turn.HELD), EveryQueue.decide(EXCLUSIVE, List.of(queue(a)), List.of(a)));
    }

    @Test
    void mismatchedListsAreRefused() {
        QueueNode a = node("multi", 5);
        assertThrows(IllegalArgumentException.class, () -> EveryQueue.decide(EXCLUSIVE, List.of(queue(a)), List.of(a, a)));
    }
}
