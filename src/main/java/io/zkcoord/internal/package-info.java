/**
 * Internal, not API: the bridge from {@link io.zkcoord.ZkClient} to the recipes
 * ({@link io.zkcoord.internal.ClientServices}: the next live session as a future, the scheduler,
 * the user-callback executor).
 */
package io.zkcoord.internal;
