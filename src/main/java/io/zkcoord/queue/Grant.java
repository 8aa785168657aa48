package io.zkcoord.queue;

import io.zkcoord.ZkSession;

/**
 * A node of ours that holds: what an {@link Acquisition} ends with.
 *
 * @param session the session the node belongs to; the hold ends with it
 * @param path the node's full path
 * @param node its parsed name
 * @param czxid the zxid of its creation: the fencing token
 */
public record Grant(ZkSession session, String path, QueueNode node, long czxid) {
}
