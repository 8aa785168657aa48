package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.List;

/**
 * The nodes of ours that hold: what an {@link Acquisition} ends with. One node for every recipe;
 * one per directory, made in one transaction, for a multi-lock.
 *
 * @param session the session the nodes belong to; the hold ends with it
 * @param paths the nodes' full paths, in the order of the {@link QueueSet}'s directories
 * @param node the first node's parsed name
 * @param czxid the zxid of their creation: the fencing token
 * @param removableDirs the directories the release may remove with the nodes: those where the
 *     grant's last read showed no node but ours (and those it knew gone) and that are known to be
 *     {@code CONTAINER} nodes; a hint only (see {@link QueueSet#release(Grant)})
 */
public record Grant(ZkSession session, List<String> paths, QueueNode node, long czxid, List<String> removableDirs) {

    public Grant {
        paths = List.copyOf(paths);
        removableDirs = List.copyOf(removableDirs);
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("a grant has at least one node");
        }
    }

    /** A grant whose release removes no directory. */
    public Grant(ZkSession session, List<String> paths, QueueNode node, long czxid) {
        this(session, paths, node, czxid, List.of());
    }

    /** @return the first node's full path (the only one, except for a multi-lock) */
    public String path() {
        return paths.get(0);
    }
}
