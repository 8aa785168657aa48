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
 *       read} counts as exclusive in a lock directory).
 *   <li>{@code lock}, {@code write}, {@code multi} and any kind no recipe here knows: exclusive,
 *       holds when first. For {@code multi} that means "first in this queue": see {@link Inspector}.
 * </ul>
 */
final class Holding {

    static final String READ = "read";
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
}
