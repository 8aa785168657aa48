package io.zkcoord;

import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.List;
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
 * @param acl the ACL of every node the recipes create
 * @param clientConfig ZooKeeper client settings
 * @param clock measures time for session-loss detection and retry delays
 */
record ClientSettings(String connectString, Duration sessionTimeout, Duration connectionTimeout,
        RetryPolicy retryPolicy, List<Auth> auths, List<ACL> acl, ZKClientConfig clientConfig, Clock clock) {

    /** An authentication to add to every session. */
    record Auth(String scheme, byte[] credentials) {
    }

    /** @return the chroot suffix of the connect string ({@code /app} of {@code host:2181/app}), or empty */
    String chroot() {
        int slash = connectString.indexOf('/');
        return slash < 0 ? "" : connectString.substring(slash);
    }
}
