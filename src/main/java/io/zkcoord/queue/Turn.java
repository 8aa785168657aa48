package io.zkcoord.queue;

/**
 * What a recipe's {@link QueueRule} answers for one node of the queue: held, watch one node, or
 * the node is missing.
 */
public sealed interface Turn permits Turn.Held, Turn.Watch, Turn.WatchQueue, Turn.Missing {

    /** The node holds. */
    Held HELD = new Held();
    /** One's own node is not in the queue: it was deleted, or its session ended. */
    Missing MISSING = new Missing();
    /** Not held yet: watch the whole queue (any node joining or leaving). */
    WatchQueue WATCH_QUEUE = new WatchQueue();

    /** The node holds. */
    record Held() implements Turn {
    }

    /**
     * Not held yet: watch {@code node}.
     *
     * @param node the node to watch
     * @param heldWhenGone true if {@code node} is the only one that blocks: once it is deleted the
     *     node holds without reading the queue again, since no node created later can stand ahead
     */
    record Watch(QueueNode node, boolean heldWhenGone) implements Turn {
        public Watch {
            if (node == null) {
                throw new IllegalArgumentException("node must not be null");
            }
        }
    }

    /**
     * Not held yet, and any node leaving ahead may be the one that lets this node hold: watch the
     * directory's children. For a rule where a release by any of several holders concerns one
     * waiter (a semaphore's first waiter); the watch also fires when a node joins, so a rule should
     * give it to one waiter at a time.
     */
    record WatchQueue() implements Turn {
    }

    /** One's own node is not in the queue. */
    record Missing() implements Turn {
    }
}
