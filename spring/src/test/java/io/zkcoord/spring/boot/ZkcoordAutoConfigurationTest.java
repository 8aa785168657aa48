package io.zkcoord.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.micrometer.ZkcoordMetrics;
import io.zkcoord.spring.ZkcoordLockRegistry;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** The auto-configuration in Boot's ApplicationContextRunner, against a real ZooKeeper server. */
class ZkcoordAutoConfigurationTest {

    private static TestingServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ZkcoordAutoConfiguration.class));

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private ApplicationContextRunner connected() {
        return runner.withPropertyValues("zkcoord.connect-string=" + server.getConnectString(),
                "zkcoord.session-timeout=4s", "zkcoord.connection-timeout=5s");
    }

    /** Without a connect string nothing is made. */
    @Test
    void nothingWithoutAConnectString() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ZkClient.class);
            assertThat(context).doesNotHaveBean(ZkcoordLockRegistry.class);
            assertThat(context).doesNotHaveBean(HealthIndicator.class);
        });
    }

    /** With one, the client, the registry (on the configured root) and the health indicator appear; the client closes with the context. */
    @Test
    void theBeansAppear() {
        ZkClient[] seen = new ZkClient[1];
        connected().withPropertyValues("zkcoord.lock-registry.root-path=/app/locks").run(context -> {
            assertThat(context).hasSingleBean(ZkClient.class);
            assertThat(context).hasSingleBean(ZkcoordLockRegistry.class);
            assertThat(context).hasBean("zkcoordHealthIndicator");
            assertThat(context).doesNotHaveBean(ZkcoordMetrics.class);
            seen[0] = context.getBean(ZkClient.class);
            assertThat(context.getBean(ZkcoordLockRegistry.class).path("k")).isEqualTo("/app/locks/k");
            ZkcoordLockRegistry registry = context.getBean(ZkcoordLockRegistry.class);
            assertThat(registry.obtain("k").tryLock(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            registry.obtain("k").unlock();
        });
        assertThat(seen[0].isClosed()).isTrue();
    }

    /** zkcoord.retry.* sets the client's retry policy; without them it is the library's default; a bad value fails the context. */
    @Test
    void retrySettingsAreBound() {
        connected().withPropertyValues("zkcoord.retry.base-delay=100ms", "zkcoord.retry.max-delay=5s",
                "zkcoord.retry.max-retries=3").run(context -> assertThat(context.getBean(ZkClient.class).retryPolicy())
                        .hasToString("exponentialBackoff(base=PT0.1S, max=PT5S, maxRetries=3)"));
        connected().run(context -> assertThat(context.getBean(ZkClient.class).retryPolicy())
                .hasToString(io.zkcoord.retry.RetryPolicy.defaultPolicy().toString()));
        connected().withPropertyValues("zkcoord.retry.max-retries=-1").run(context -> assertThat(context).hasFailed()
                .getFailure().hasRootCauseInstanceOf(IllegalArgumentException.class));
    }

    /** Each bean backs off when the application defines its own. */
    @Test
    void theBeansBackOff() {
        ZkClient mine = ZkClient.builder().connectString(server.getConnectString()).build();
        try {
            ZkcoordLockRegistry myRegistry = new ZkcoordLockRegistry(mine, "/mine");
            HealthIndicator myHealth = () -> org.springframework.boot.health.contributor.Health.up().build();
            ZkcoordMetrics myMetrics = ZkcoordMetrics.builder(mine).build();
            connected()
                    .withBean(ZkClient.class, () -> mine, d -> d.setDestroyMethodName(""))
                    .withBean(ZkcoordLockRegistry.class, () -> myRegistry)
                    .withBean("zkcoordHealthIndicator", HealthIndicator.class, () -> myHealth)
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withBean(ZkcoordMetrics.class, () -> myMetrics)
                    .run(context -> {
                        assertThat(context).getBean(ZkClient.class).isSameAs(mine);
                        assertThat(context).getBean(ZkcoordLockRegistry.class).isSameAs(myRegistry);
                        assertThat(context).getBean("zkcoordHealthIndicator").isSameAs(myHealth);
                        assertThat(context).getBean(ZkcoordMetrics.class).isSameAs(myMetrics);
                    });
        } finally {
            mine.close();
        }
    }

    /**
     * An application that defines a lock registry of another kind (here Spring's in-memory one) keeps
     * it as its only LockRegistry: a second one would make every injection of LockRegistry ambiguous
     * and stop the application from starting.
     */
    @Test
    void theRegistryBacksOffForAnyLockRegistryOfTheApplication() {
        connected()
                .withBean(DefaultLockRegistry.class, DefaultLockRegistry::new)
                .withBean(NeedsALockRegistry.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(LockRegistry.class);
                    assertThat(context).getBean(LockRegistry.class).isInstanceOf(DefaultLockRegistry.class);
                    assertThat(context).hasSingleBean(ZkClient.class);
                });
    }

    /** An application bean that takes the LockRegistry by type, as LockRequestHandlerAdvice users do. */
    static class NeedsALockRegistry {

        NeedsALockRegistry(LockRegistry<?> registry) {
            assertThat(registry).isNotNull();
        }
    }

    /** Without Spring Integration there is no registry; without Boot's health support no indicator. */
    @Test
    void optionalBeansNeedTheirClassPath() {
        connected().withClassLoader(new FilteredClassLoader("org.springframework.integration")).run(context -> {
            assertThat(context).hasSingleBean(ZkClient.class);
            assertThat(context).doesNotHaveBean(ZkcoordLockRegistry.class);
        });
        connected().withClassLoader(new FilteredClassLoader("org.springframework.boot.health")).run(context -> {
            assertThat(context).hasSingleBean(ZkClient.class);
            assertThat(context).doesNotHaveBean("zkcoordHealthIndicator");
        });
        connected().withClassLoader(new FilteredClassLoader(ZkcoordMetrics.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(ZkcoordMetrics.class);
                });
        connected().withClassLoader(new FilteredClassLoader("io.micrometer", "io.zkcoord.micrometer")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(ZkClient.class);
        });
        connected().withPropertyValues("management.health.zkcoord.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean("zkcoordHealthIndicator"));
    }

    /** With a MeterRegistry bean the metrics are made and bound once: the session gauge reads 1 for the state. */
    @Test
    void metricsAreBoundWhenARegistryExists() {
        connected().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(ZkcoordMetrics.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            ZkClient client = context.getBean(ZkClient.class);
            io.zkcoord.spring.Await.until("connected", Duration.ofSeconds(20), () -> client.state().isConnected());
            assertThat(registry.find("zkcoord.session.state").tag("state", "connected").gauges()).hasSize(1);
            assertThat(registry.get("zkcoord.session.state").tag("state", "connected").gauge().value()).isEqualTo(1.0);
        });
    }

    /** The application starts while the ensemble is down; the indicator says DOWN until a session exists. */
    @Test
    void startsWhileTheEnsembleIsDown() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        runner.withPropertyValues("zkcoord.connect-string=127.0.0.1:" + port).run(context -> {
            assertThat(context).hasNotFailed();
            ZkClient client = context.getBean(ZkClient.class);
            assertThat(client.state()).isEqualTo(ConnectionState.CONNECTING);
            HealthIndicator health = context.getBean("zkcoordHealthIndicator", HealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.health().getDetails()).containsEntry("state", "CONNECTING").containsEntry("sessionId", "0x0");
        });
    }

    /** UP once connected, DOWN when the session is expired on the server (as its listeners are told), UP again in the new session. */
    @Test
    void healthGoesUpThenDownOnExpiry() {
        connected().run(context -> {
            ZkClient client = context.getBean(ZkClient.class);
            HealthIndicator health = context.getBean("zkcoordHealthIndicator", HealthIndicator.class);
            io.zkcoord.spring.Await.until("UP", Duration.ofSeconds(20), () -> health.health().getStatus().equals(Status.UP));
            assertThat(health.health().getDetails()).containsEntry("state", "CONNECTED")
                    .containsEntry("sessionId", "0x" + Long.toHexString(client.sessionId()));
            List<Status> atLoss = new CopyOnWriteArrayList<>();
            client.addConnectionListener(state -> {
                if (state == ConnectionState.LOST) {
                    atLoss.add(health.health().getStatus());
                }
            });
            io.zkcoord.spring.ServerSideExpiry.expire(client.zooKeeper(), server.getConnectString(), Duration.ofSeconds(20));
            io.zkcoord.spring.Await.until("LOST reported", Duration.ofSeconds(20), () -> !atLoss.isEmpty());
            assertThat(atLoss).containsExactly(Status.DOWN);
            io.zkcoord.spring.Await.until("UP again", Duration.ofSeconds(20), () -> health.health().getStatus().equals(Status.UP));
        });
    }

    /** The mapping of every state. */
    @Test
    void everyStateHasItsStatus() {
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.CONNECTED)).isEqualTo(Status.UP);
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.RECONNECTED)).isEqualTo(Status.UP);
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.SUSPENDED)).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.LOST)).isEqualTo(Status.DOWN);
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.CLOSED)).isEqualTo(Status.DOWN);
        assertThat(ZkcoordHealthIndicator.status(ConnectionState.CONNECTING)).isEqualTo(Status.DOWN);
    }
}
