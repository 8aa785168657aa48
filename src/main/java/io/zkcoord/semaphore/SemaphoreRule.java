package io.zkcoord.semaphore;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.QueueRule;
import io.zkcoord.queue.Turn;
import java.util.List;

/**
 * The semaphore's pure rule, for {@code permits} = N. Every node of the directory counts, in queue
 * order (sequence number only).
 *
 * <ul>
 *   <li>Position {@code p < N}: <b>held</b>. FIFO: a node holds only once fewer than N nodes stand
 *       ahead of it, so a later arrival never overtakes an earlier waiter, even when it would fit.
 *   <li>{@code p == N}, the <b>first waiter</b>: any of the N holders may leave first, and that one
 *       release is the only event that lets it hold. It watches the queue (the directory's
 *       children): whichever holder leaves, released or crashed, it is told, and no one else is.
 *   <li>{@code p > N}: watches its <b>immediate predecessor</b>, a waiter. That predecessor's node
 *       changes in exactly two ways that matter: it leaves (gave up, crashed: look again), or it
 *       comes to hold and announces it by rewriting its data once ({@link #announcesPromotion()}):
 *       then this node may have become the first waiter and must take over the watch of the queue.
 * </ul>
 * So one release costs two notifications whatever the queue length and the permits: the first
 * waiter (who takes the permit) and the one behind it (who becomes first waiter). A waiter that
 * leaves or joins the queue also fires the first waiter's watch (it reads the queue again). See
 * docs/herd-effect.md for why no release is missed.
 */
final class SemaphoreRule implements QueueRule {

    private final int permits;

    SemaphoreRule(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        this.permits = permits;
    }

    @Override
    public Turn decide(List<QueueNode> queue, QueueNode own) {
        int position = QueueRule.positionOf(queue, own);
        if (position < 0) {
            return Turn.MISSING;
        }
        if (position < permits) {
            return Turn.HELD;
        }
        if (position == permits) {
            return Turn.WATCH_QUEUE;
        }
        return new Turn.Watch(queue.get(position - 1), false);
    }

    @Override
    public boolean announcesPromotion() {
        return true;
    }

    @Override
    public String toString() {
        return "SemaphoreRule[permits=" + permits + "]";
    }
}
