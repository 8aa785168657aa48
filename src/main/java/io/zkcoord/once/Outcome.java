package io.zkcoord.once;

/**
 * What an operation of a {@link OnceWriter} came to.
 *
 * @param result what it returns
 * @param after the value node as the operation left or last saw it: written by its applied attempt
 *     (zxids 0 if that attempt made the node), or read when it answered without a write or found
 *     out after a lost reply that its attempt had landed (later writes by others may show)
 * @param <R> what the operation returns
 */
public record Outcome<R>(R result, NodeState after) {
}
