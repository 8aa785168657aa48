/**
 * {@link io.zkcoord.cache.ZkCache}: a local copy of a subtree, kept on one persistent recursive
 * watch, that never misses a change (docs/cache.md).
 *
 * <p>Inside: {@code SubtreeSync} takes in the watch's events and the connection's changes and drives
 * the loads and reads; {@code SubtreeLoader} reads a whole subtree with pipelined requests; {@code
 * TreeDiff} is the pure rule that turns two copies into ordered events; {@code CacheTree} holds the
 * copy; {@code ListenerDispatch} tells the listeners.
 */
package io.zkcoord.cache;
