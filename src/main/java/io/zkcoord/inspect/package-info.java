/**
 * Reading a queue directory as an operator would: who holds, since when, who waits, for every
 * recipe's directory ({@link io.zkcoord.lock.ZkMutex}, {@link io.zkcoord.lock.ZkReadWriteLock},
 * {@link io.zkcoord.semaphore.ZkSemaphore}, {@link io.zkcoord.election.ZkLeaderElection}, multi-locks).
 * {@link io.zkcoord.inspect.Inspector#inspect} gives a {@link io.zkcoord.inspect.QueueSnapshot} in
 * two round trips whatever the queue length; the {@code zkcoord inspect} command prints it.
 */
package io.zkcoord.inspect;
