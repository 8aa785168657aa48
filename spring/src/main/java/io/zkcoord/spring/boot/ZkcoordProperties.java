package io.zkcoord.spring.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code zkcoord.*} properties read by {@link ZkcoordAutoConfiguration}.
 *
 * <pre>
 * zkcoord.connect-string=zk1:2181,zk2:2181,zk3:2181
 * zkcoord.session-timeout=10s
 * zkcoord.connection-timeout=15s
 * zkcoord.lock-registry.root-path=/locks
 * zkcoord.retry.base-delay=50ms
 * zkcoord.retry.max-delay=2s
 * zkcoord.retry.max-retries=10
 * </pre>
 *
 * <p>A mutable bean filled by Spring Boot's binder at start-up; not for concurrent mutation.
 */
@ConfigurationProperties(prefix = "zkcoord")
public class ZkcoordProperties {

    /** The ensemble, {@code host:port[,host:port...][/chroot]}; nothing is made without it. */
    private String connectString;
    /** The session timeout the client asks for; the library's default (10 s) when unset. */
    private Duration sessionTimeout;
    /** How long one connection attempt may take; the library's default (15 s) when unset. */
    private Duration connectionTimeout;
    private final LockRegistry lockRegistry = new LockRegistry();
    private final Retry retry = new Retry();

    /** @return {@code zkcoord.connect-string}, or null when unset */
    public String getConnectString() {
        return connectString;
    }

    /** @param connectString {@code zkcoord.connect-string}; checked by the client builder */
    public void setConnectString(String connectString) {
        this.connectString = connectString;
    }

    /** @return {@code zkcoord.session-timeout}, or null for the library's default */
    public Duration getSessionTimeout() {
        return sessionTimeout;
    }

    /** @param sessionTimeout {@code zkcoord.session-timeout} */
    public void setSessionTimeout(Duration sessionTimeout) {
        this.sessionTimeout = sessionTimeout;
    }

    /** @return {@code zkcoord.connection-timeout}, or null for the library's default */
    public Duration getConnectionTimeout() {
        return connectionTimeout;
    }

    /** @param connectionTimeout {@code zkcoord.connection-timeout} */
    public void setConnectionTimeout(Duration connectionTimeout) {
        this.connectionTimeout = connectionTimeout;
    }

    /** @return the {@code zkcoord.lock-registry.*} properties */
    public LockRegistry getLockRegistry() {
        return lockRegistry;
    }

    /** @return the {@code zkcoord.retry.*} properties */
    public Retry getRetry() {
        return retry;
    }

    /**
     * {@code zkcoord.retry.*}: the client's retry policy for every operation, {@link
     * io.zkcoord.retry.RetryPolicy#exponentialBackoff exponentialBackoff(base-delay, max-delay,
     * max-retries)}. The defaults are the library's default policy: 50 ms, 2 s, 10 retries, which
     * rides out a leader election and gives up after roughly 10 to 30 s without a server.
     */
    public static class Retry {

        /** The delay before the first retry (before jitter). */
        private Duration baseDelay = Duration.ofMillis(50);
        /** The cap of any delay. */
        private Duration maxDelay = Duration.ofSeconds(2);
        /** How many retries at most. */
        private int maxRetries = 10;

        /** @return {@code zkcoord.retry.base-delay}, 50 ms by default */
        public Duration getBaseDelay() {
            return baseDelay;
        }

        /** @param baseDelay {@code zkcoord.retry.base-delay}; positive, checked when the client is made */
        public void setBaseDelay(Duration baseDelay) {
            this.baseDelay = baseDelay;
        }

        /** @return {@code zkcoord.retry.max-delay}, 2 s by default */
        public Duration getMaxDelay() {
            return maxDelay;
        }

        /** @param maxDelay {@code zkcoord.retry.max-delay}; at least the base delay, checked when the client is made */
        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        /** @return {@code zkcoord.retry.max-retries}, 10 by default */
        public int getMaxRetries() {
            return maxRetries;
        }

        /** @param maxRetries {@code zkcoord.retry.max-retries}; zero or more, checked when the client is made */
        public void setMaxRetries(int maxRetries) {
            this.maxRetries = maxRetries;
        }
    }

    /** {@code zkcoord.lock-registry.*}: the Spring Integration lock registry. */
    public static class LockRegistry {

        /** The directory of the registry's locks. */
        private String rootPath = "/locks";

        /** @return {@code zkcoord.lock-registry.root-path}, {@code /locks} by default */
        public String getRootPath() {
            return rootPath;
        }

        /** @param rootPath {@code zkcoord.lock-registry.root-path}; checked by the registry */
        public void setRootPath(String rootPath) {
            this.rootPath = rootPath;
        }
    }
}
