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
