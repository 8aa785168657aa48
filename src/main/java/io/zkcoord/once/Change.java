package io.zkcoord.once;

/**
 * An operation on one node, as a pure function of the node's state: the rule of a recipe (add a
 * delta, compare and set, count a latch down). Called again with each newer state while the
 * operation is retried, so it must not have side effects.
 *
 * @param <R> what the operation returns
 */
@FunctionalInterface
public interface Change<R> {

    /**
     * @param current the node's state: read during this operation, or remembered from the last one
     * @return what to do
     * @throws RuntimeException to fail the operation (nothing is written), for example a value
     *     that cannot be decoded
     */
    Plan<R> plan(NodeState current);
}
