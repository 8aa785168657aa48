/**
 * Writes to one node that are applied exactly once, even when their reply is lost: the engine
 * under {@code io.zkcoord.value} and {@code io.zkcoord.barrier}. Internal: not part of the API.
 *
 * <p>Every write is one {@code multi}: the value's conditional write beside a write of this
 * session's <em>marker</em>, an ephemeral child of the value node that names the operation and
 * the attempt, guarded by the marker's own version. See {@link io.zkcoord.once.OnceRule}.
 */
package io.zkcoord.once;
