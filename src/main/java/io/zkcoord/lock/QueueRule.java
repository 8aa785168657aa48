package io.zkcoord.lock;

import java.util.List;

/**
 * The pure heart of both recipes: given the queue and one's own node, is the lock held, and if
 * not, which single node to watch. No I/O, so it is tested without a server.
 *
 * <ul>
 *   <li>Exclusive node ({@code lock-}, {@code write-}): held when first in the queue; otherwise
 *       watch the immediate predecessor, whatever its kind.
 *   <li>Shared node ({@code read-}): held when no exclusive node is ahead; otherwise watch the last
 *       exclusive node ahead of it (not the first one in the queue: readers behind a queued writer
 *       must wake when that writer leaves, not when an earlier one does).
 * </ul>
 * A release therefore wakes only the waiters that watch the released node: one exclusive waiter,
 * or the readers right behind one writer.
 */
final class QueueRule {

    private QueueRule() {
    }

    /** What a waiter should do next. */
    sealed interface Turn permits Held, Watch, Missing {
    }

    /** The lock is held. */
    record Held() implements Turn {
    }

    /**
     * Not held yet: watch {@code node}.
     *
     * @param node the node to watch
     * @param heldWhenGone true if {@code node} is the only one that blocks: once it is deleted the
     *     lock is held without reading the queue again, since no node created later can stand
     *     ahead
     */
    record Watch(LockNode node, boolean heldWhenGone) implements Turn {
    }

    /** One's own node is not in the queue: it was deleted, or its session ended. */
    record Missing() implements Turn {
    }

    private static final Held HELD = new Held();
    private static final Missing MISSING = new Missing();

    /**
     * @param queue every lock node of the directory, in queue order ({@link LockNode#QUEUE_ORDER})
     * @param own the caller's node
     * @return what to do
     */
    static Turn decide(List<LockNode> queue, LockNode own) {
        int position = -1;
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).name().equals(own.name())) {
                position = i;
                break;
            }
        }
        if (position < 0) {
            return MISSING;
        }
        if (!own.kind().shared()) {
            return position == 0 ? HELD : new Watch(queue.get(position - 1), position == 1);
        }
        LockNode lastExclusive = null;
        int exclusiveAhead = 0;
        for (int i = 0; i < position; i++) {
            LockNode n = queue.get(i);
            if (!n.kind().shared()) {
                lastExclusive = n;
                exclusiveAhead++;
            }
        }
        return lastExclusive == null ? HELD : new Watch(lastExclusive, exclusiveAhead == 1);
    }
}
