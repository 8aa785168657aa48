package io.zkcoord.value;

/**
 * A value with the version of the node it was read from: what {@link ZkSharedValue#get()} returns
 * and {@link ZkSharedValue#trySet} takes back. Immutable if {@code T} is (a {@code byte[]} value
 * is shared, not copied: do not change it).
 *
 * @param value the value
 * @param version the node's data version when the value was read: an int that wraps past {@link
 *     Integer#MAX_VALUE} to negative numbers, so compare it only for equality
 * @param <T> the value's type
 */
public record Versioned<T>(T value, int version) {
}
