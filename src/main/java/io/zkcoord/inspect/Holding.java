package io.zkcoord.inspect;

import io.zkcoord.queue.QueueNode;
import java.util.List;

/**
 * Who holds, decided for each node by the rule of the recipe its kind names, from the queue alone.
 * Pure; the same facts the recipes' own rules ({@code LockRule}, {@code SemaphoreRule}, {@code
 * ElectionRule}) decide from:
 *
 * <ul>
 *   <li>{@code sem}: holds when its position in the queue (every node counts) is below the
 *       directory's permit count.
 *   <li>{@code leader}: holds when first.
 *   <li>{@code read}: holds when no node of another kind is ahead of it (every kind but {@code
 *       read} counts as exclusive in a lock directory), or when it was taken by downgrading the
 *       write hold at the head of the queue ({@link #downgradedFrom}).
 *   <li>{@code lock}, {@code write}, {@code multi} and any kind no recipe here knows: exclusive,
 *       holds when first. For {@code multi} that means "first in this queue": see {@link Inspector}.
 * </ul>
 */
final class Holding {

    static final String READ = "read";
    static final String WRITE = "write";
    static final String SEMAPHORE = "sem";
    static final String LEADER = "leader";

    private Holding() {
    }

    /**
     * @param queue the directory's queue nodes, in queue order
     * @param permits the semaphore's permit count (used for {@code sem} nodes only), at least 1
     * @return for each node of {@code queue}, at the same index, whether it holds
     */
    static boolean[] decide(List<QueueNode> queue, int permits) {
        boolean[] holding = new boolean[queue.size()];
        boolean exclusiveAhead = false;
        for (int i = 0; i < queue.size(); i++) {
            String kind = queue.get(i).kind();
            holding[i] = switch (kind) {
                case SEMAPHORE -> i < permits;
                case READ -> !exclusiveAhead;
                default -> i == 0; // leader, lock, write, multi, unknown: the first node only
            };
            if (!kind.equals(READ)) {
                exclusiveAhead = true;
            }
        }
        return holding;
    }

    /**
     * A read hold taken by downgrading: the thread that holds the write lock takes the read lock
     * at once, whatever is queued between (and keeps its write node, if a writer queued between,
     * until the read hold ends). Such a read node sits behind exclusive nodes yet holds; its hold's
     * token is the write node's czxid. It is recognised by its owner: the same session and the same
     * thread as the write node at the head of the queue.
     *
     * @param queue the queue nodes, in queue order
     * @param owners for each node, its session id and owner thread (same order)
     * @param i the index of a node
     * @return the index of the write node it was downgraded from (0), or -1 if it is not such a read
     */
    static int downgradedFrom(List<QueueNode> queue, List<Owner> owners, int i) {
        if (i == 0 || !queue.get(i).kind().equals(READ) || !queue.get(0).kind().equals(WRITE)) {
            return -1;
        }
        Owner head = owners.get(0);
        Owner read = owners.get(i);
        return head.sessionId() != 0 && head.equals(read) && !head.thread().isEmpty() ? 0 : -1;
    }

    /** Who made a node: its session and the thread named in its data. */
    record Owner(long sessionId, String thread) {
    }
}
