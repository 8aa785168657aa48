/**
 * Internal, not API: the queue core every recipe runs on. An {@link io.zkcoord.queue.Acquisition}
 * is an asynchronous state machine (enqueue with the first read pipelined, decide through the
 * recipe's pure {@link io.zkcoord.queue.QueueRule}, watch one node, grant) that completes a
 * future; {@link io.zkcoord.queue.QueueDirectory} holds the work nobody waits for (release,
 * deleting abandoned nodes, creating the directory). No public signature of an API package
 * mentions these types (ApiBoundaryTest keeps it so).
 */
package io.zkcoord.queue;
