package io.zkcoord.session;

import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;

/**
 * The settings of one {@link ZkClient}, fixed when {@link ZkClient.Builder#build()} is called.
 *
 * @param connectString comma-separated {@code host:port} list, with an optional chroot suffix
 * @param sessionTimeout the session timeout asked for
 * @param connectionTimeout how long {@code build()} waits for the first session
 * @param retryPolicy the policy for every operation
 * @param auths authentications added to every session
 * @param acl the ACL of every node the recipes create, unless {@code aclProvider} is set
 * @param clientConfig ZooKeeper client settings
 * @param clock measures time for session-loss detection and retry delays
 * @param aclProvider the ACL of each node by its path (the client's view, without the chroot), or
 *     null to give every node {@code acl}
 * @param createChroot whether a missing chroot is created before the first session (false: a
 *     read-only client, which leaves the ensemble as it is and sees a missing chroot as missing)
 */
public record ClientSettings(String connectString, Duration sessionTimeout, Duration connectionTimeout,
        RetryPolicy retryPolicy, List<Auth> auths, List<ACL> acl, ZKClientConfig clientConfig, Clock clock,
        Function<String, List<ACL>> aclProvider, boolean createChroot) {

    /**
     * An authentication to add to every session. Its {@code toString()} names the scheme only:
     * credentials never reach a log line or a message.
     */
    public record Auth(String scheme, byte[] credentials) {
        @Override
        public String toString() {
            return "Auth[" + scheme + ", credentials hidden]";
        }
    }

    /**
     * @param path a node's path as the client names it (without the chroot)
     * @return the ACL to create it with: {@code aclProvider}'s answer, or {@code acl}
     * @throws IllegalStateException if the provider answers null, an empty list or a list with a
     *     null element
     */
    public List<ACL> aclFor(String path) {
        if (aclProvider == null) {
            return acl;
        }
        List<ACL> given = aclProvider.apply(path);
        if (given == null || given.isEmpty() || given.stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalStateException("the aclProvider gave " + given + " for " + path
                    + "; it must give a non-empty list without nulls");
        }
        // ZooKeeper's create calls acl.contains(null), which immutable lists refuse.
        return java.util.Collections.unmodifiableList(new java.util.ArrayList<>(given));
    }

    /** @return the chroot suffix of the connect string ({@code /app} of {@code host:2181/app}), or empty */
    public String chroot() {
        int slash = connectString.indexOf('/');
        return slash < 0 ? "" : connectString.substring(slash);
    }
}
