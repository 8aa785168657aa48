/**
 * Internal, not API: the session machinery behind {@link io.zkcoord.ZkClient}. {@link
 * io.zkcoord.session.SessionLifecycle} is the state machine of the client's sessions (states and
 * transitions), with {@code FirstConnection} (connecting and probing: the first session within the
 * connection timeout, the probes that say why none came) and {@code Rebuilder} (rebuilding: a new
 * handle after a loss, and the end on the ensemble of a session presumed lost); around it the
 * checked settings ({@link io.zkcoord.session.ClientSettings}, {@link
 * io.zkcoord.session.ConnectString}), the chroot's creation, the TLS and TCP probes, and the
 * background close of a handle.
 *
 * <p>Not published: the javadoc leaves this package out, as it does {@code io.zkcoord.queue} and
 * {@code io.zkcoord.internal}. Some members are public only because {@code io.zkcoord} calls them
 * from another package; applications must not use them, and they change without notice.
 */
package io.zkcoord.session;
