/**
 * Internal, not API: the bridge from {@link io.zkcoord.ZkClient} to the recipes
 * ({@link io.zkcoord.internal.ClientServices}: the next live session as a future, the scheduler,
 * the user-callback executor), and what the library keeps for its own modules
 * ({@link io.zkcoord.internal.Reachability}: whether ZooKeeper is reachable, for the Spring registry
 * and the ShedLock provider).
 */
package io.zkcoord.internal;
