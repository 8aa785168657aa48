package io.zkcoord;

import org.apache.zookeeper.KeeperException;

/**
 * ZooKeeper refused a request for want of permission ({@code NOAUTH}): the ACL of a node does not
 * grant what the request needs to any identity of this client's session (its digest or SASL
 * authentications, its TLS client certificate's {@code x509} name, its address). A permanent
 * failure: the same request from the same identities would be refused again, so zkcoord never
 * retries it and a waiter ends at once; fix the ACL or the client's identity.
 *
 * <p>The message names the path, the operation refused and the permission it needs; it never
 * contains credentials. {@link #getCause()} is ZooKeeper's {@link KeeperException.NoAuthException}.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class NotAuthorizedException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** The node whose ACL refused, as the client names it. */
    private final String path;

    /**
     * @param path the node whose ACL refused, as the client names it
     * @param refused what was refused and the permission it needs, e.g. {@code "create a node in
     *     it (needs CREATE)"}
     * @param cause ZooKeeper's answer
     */
    public NotAuthorizedException(String path, String refused, Throwable cause) {
        super("not authorized (NOAUTH): the ACL of " + path + " does not let this client's identities " + refused,
                cause);
        this.path = path;
    }

    /** @return the node whose ACL refused, as the client names it */
    public String path() {
        return path;
    }
}
