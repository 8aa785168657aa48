package io.zkcoord.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * An {@link Acquisition}'s own nodes, once its create's reply (or the search after a lost one)
 * showed them: one per directory of its set, in the set's order, made in one transaction.
 *
 * @param paths the nodes' full paths
 * @param nodes their parsed names
 * @param czxid the zxid of their creation, the same for every node
 */
record OwnNodes(List<String> paths, List<QueueNode> nodes, long czxid) {

    OwnNodes {
        paths = List.copyOf(paths);
        nodes = List.copyOf(nodes);
    }

    /**
     * @param paths the nodes' full paths, as the create's reply named them
     * @throws IllegalStateException if a name is not a queue node's
     */
    static OwnNodes of(List<String> paths, long czxid) {
        List<QueueNode> nodes = new ArrayList<>(paths.size());
        for (String path : paths) {
            nodes.add(QueueNode.parse(path.substring(path.lastIndexOf('/') + 1))
                    .orElseThrow(() -> new IllegalStateException("unexpected node name " + path)));
        }
        return new OwnNodes(paths, nodes, czxid);
    }

    /** @return the first directory's node (the only one, except for a multi-lock) */
    QueueNode first() {
        return nodes.get(0);
    }
}
