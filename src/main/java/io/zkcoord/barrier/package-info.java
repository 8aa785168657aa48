/**
 * Latches and barriers: {@link io.zkcoord.barrier.ZkCountDownLatch} (re-armable, by generations),
 * {@link io.zkcoord.barrier.ZkBarrier} and {@link io.zkcoord.barrier.ZkDoubleBarrier}. Every waiter
 * holds one watch on the one node whose change opens it, re-checks after every wake-up, and
 * leaves no watch and no node when its time runs out.
 */
package io.zkcoord.barrier;
