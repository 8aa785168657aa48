package io.zkcoord.lock;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.QueueRule;
import io.zkcoord.queue.Turn;
import java.util.List;

/**
 * The pure heart of the lock recipes: given the queue and one's own node, is the lock held, and if
 * not, which single node to watch. No I/O, so it is tested without a server.
 *
 * <ul>
 *   <li>Exclusive node ({@code lock-}, {@code write-}): held when first in the queue; otherwise
 *       watch the immediate predecessor, whatever its kind.
 *   <li>Shared node ({@code read-}): held when no exclusive node is ahead; otherwise watch the last
 *       exclusive node ahead of it (not the first one in the queue: readers behind a queued writer
 *       must wake when that writer leaves, not when an earlier one does).
 *   <li>A node of a kind this rule does not know counts as exclusive: it blocks, and is waited for.
 *   <li>Curator's nodes count as the kind of ours they match ({@code lock-} as {@code lock}, {@code
 *       __WRIT__} as {@code write}, {@code __READ__} as {@code read}); an exclusive waiter right
 *       behind a Curator write node looks at the queue again when it goes (a Curator downgrade may
 *       have put a read node in its place), where behind any other single node it holds at once.
 * </ul>
 * A release therefore wakes only the waiters that watch the released node: one exclusive waiter,
 * or the readers right behind one writer.
 */
final class LockRule implements QueueRule {

    /** The one instance: the rule has no state. */
    static final LockRule INSTANCE = new LockRule();

    private LockRule() {
    }

    @Override
    public Turn decide(List<QueueNode> queue, QueueNode own) {
        return decideFor(queue, own);
    }

    /**
     * @param queue every node of the directory, in queue order ({@link QueueNode#QUEUE_ORDER})
     * @param own the caller's node
     * @return what to do
     */
    static Turn decideFor(List<QueueNode> queue, QueueNode own) {
        int position = QueueRule.positionOf(queue, own);
        if (position < 0) {
            return Turn.MISSING;
        }
        if (!shared(own)) {
            if (position == 0) {
                return Turn.HELD;
            }
            QueueNode predecessor = queue.get(position - 1);
            return new Turn.Watch(predecessor, position == 1 && !mayDowngrade(predecessor));
        }
        QueueNode lastExclusive = null;
        int exclusiveAhead = 0;
        for (int i = 0; i < position; i++) {
            QueueNode n = queue.get(i);
            if (!shared(n)) {
                lastExclusive = n;
                exclusiveAhead++;
            }
        }
        return lastExclusive == null ? Turn.HELD : new Turn.Watch(lastExclusive, exclusiveAhead == 1);
    }

    /**
     * A Curator write node's holder may take the read lock (a downgrade) and then release the write
     * node: its read node carries the write node's sequence, so it stands where the write node stood.
     * An exclusive waiter right behind such a node must read the queue again when it goes, rather
     * than hold at once. (Our own downgrade keeps its write node instead; see ZkReadWriteLock.)
     */
    private static boolean mayDowngrade(QueueNode node) {
        return node.curatorForm() && NodeKind.of(node) == NodeKind.WRITE;
    }

    private static boolean shared(QueueNode node) {
        NodeKind kind = NodeKind.of(node);
        return kind != null && kind.shared();
    }
}
