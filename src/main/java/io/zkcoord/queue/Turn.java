package io.zkcoord.queue;

/**
 * What a recipe's {@link QueueRule} answers for one node of the queue: held, watch one node, or
 * the node is missing.
 */
public sealed interface Turn permits Turn.Held, Turn.Watch, Turn.Missing {

    /** The node holds. */
    Held HELD = new Held();
    /** One's own node is not in the queue: it was deleted, or its session ended. */
    Missing MISSING = new Missing();

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

    /** One's own node is not in the queue. */
    record Missing() implements Turn {
    }
}
