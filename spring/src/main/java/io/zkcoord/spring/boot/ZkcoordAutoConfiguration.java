package io.zkcoord.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.zkcoord.ZkClient;
import io.zkcoord.micrometer.ZkcoordMetrics;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.spring.ZkcoordLockRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Boot auto-configuration of zkcoord, active when {@code zkcoord.connect-string} is set
 * (see {@link ZkcoordProperties}). Each bean is made only when the application has not defined
 * its own:
 * <ul>
 *   <li>a {@link ZkClient} made with {@link ZkClient.Builder#start()}: the application starts even
 *       while the ensemble is down, and the client connects when it can; closed with the context;
 *       its retry policy from {@code zkcoord.retry.*};
 *   <li>a {@link ZkcoordLockRegistry} on {@code zkcoord.lock-registry.root-path} (default {@code
 *       /locks}), when Spring Integration is on the class path and the application has no {@link
 *       LockRegistry} of any kind;
 *   <li>a {@link ZkcoordHealthIndicator} named {@code zkcoord}, when Boot's health support is on the
 *       class path (and {@code management.health.zkcoord.enabled} is not false);
 *   <li>{@link ZkcoordMetrics}, when the {@code zkcoord-micrometer} module is on the class path and a
 *       {@link MeterRegistry} bean exists; bound by Boot's metrics support, or by this
 *       configuration to the one registry when Boot's is absent.
 * </ul>
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnProperty(prefix = "zkcoord", name = "connect-string")
@EnableConfigurationProperties(ZkcoordProperties.class)
public class ZkcoordAutoConfiguration {

    /** The type name of Boot's post-processor that binds every MeterBinder bean to the registries. */
    static final String BOOT_METER_BINDING =
            "org.springframework.boot.micrometer.metrics.autoconfigure.MeterRegistryPostProcessor";

    /**
     * The client; {@code start()} returns at once and connects in the background.
     *
     * @throws IllegalArgumentException (failing the context) if a property is malformed
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public ZkClient zkClient(ZkcoordProperties properties) {
        ZkClient.Builder builder = ZkClient.builder().connectString(properties.getConnectString());
        if (properties.getSessionTimeout() != null) {
            builder.sessionTimeout(properties.getSessionTimeout());
        }
        if (properties.getConnectionTimeout() != null) {
            builder.connectionTimeout(properties.getConnectionTimeout());
        }
        ZkcoordProperties.Retry retry = properties.getRetry();
        builder.retryPolicy(RetryPolicy.exponentialBackoff(retry.getBaseDelay(), retry.getMaxDelay(), retry.getMaxRetries()));
        return builder.start();
    }

    /** The lock registry, when Spring Integration is there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LockRegistry.class)
    static class LockRegistryConfiguration {

        /** Backs off for any LockRegistry of the application: a second one would make injections by type ambiguous. */
        @Bean
        @ConditionalOnMissingBean(LockRegistry.class)
        ZkcoordLockRegistry zkcoordLockRegistry(ZkClient client, ZkcoordProperties properties) {
            return new ZkcoordLockRegistry(client, properties.getLockRegistry().getRootPath());
        }
    }

    /**
     * The health indicator, when Boot's health support is there. The check that it is enabled sits
     * one class deeper: its condition class lives in that support, and is only looked at once the
     * class path check passed.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class HealthConfiguration {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnEnabledHealthIndicator("zkcoord")
        static class EnabledHealthConfiguration {

            @Bean
            @ConditionalOnMissingBean(name = "zkcoordHealthIndicator")
            ZkcoordHealthIndicator zkcoordHealthIndicator(ZkClient client) {
                return new ZkcoordHealthIndicator(client);
            }
        }
    }

    /** The Micrometer binding, when the module and a registry are there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ZkcoordMetrics.class, MeterRegistry.class})
    @ConditionalOnBean(MeterRegistry.class)
    static class MetricsConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        ZkcoordMetrics zkcoordMetrics(ZkClient client) {
            return ZkcoordMetrics.builder(client).build();
        }

        /** Binds the metrics where Boot's metrics support, which would bind every MeterBinder, is absent. */
        @Bean
        @ConditionalOnMissingBean(type = BOOT_METER_BINDING)
        SmartInitializingSingleton zkcoordMetricsBinding(ObjectProvider<ZkcoordMetrics> metrics,
                ObjectProvider<MeterRegistry> registries) {
            return () -> metrics.ifAvailable(m -> registries.orderedStream().forEach(m::bindTo));
        }
    }
}
