package io.zkcoord.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.zkcoord.ZkClient;
import io.zkcoord.spring.Await;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointWebExtension;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.actuate.endpoint.ApiVersion;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebServerNamespace;

/**
 * The zkcoord health details (state, sessionId, connectString) through Boot's health endpoint, as
 * docs/spring-and-shedlock.md says: only with {@code management.endpoint.health.show-details}.
 */
class HealthDetailsTest {

    private static TestingServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ZkcoordAutoConfiguration.class, EndpointAutoConfiguration.class,
                    HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                    HealthEndpointAutoConfiguration.class));

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Test
    void detailsShowOnlyWithShowDetails() {
        runner.withPropertyValues("zkcoord.connect-string=" + server.getConnectString()).run(context -> {
            assertThat(zkcoordHealth(context)).as("Boot's default (never): not even the component").isNull();
        });
        runner.withPropertyValues("zkcoord.connect-string=" + server.getConnectString(),
                "management.endpoint.health.show-details=always").run(context -> {
                    IndicatedHealthDescriptor zkcoord = (IndicatedHealthDescriptor) zkcoordHealth(context);
                    assertThat(zkcoord.getStatus()).isEqualTo(Status.UP);
                    assertThat(zkcoord.getDetails()).containsKeys("state", "sessionId", "connectString")
                            .containsEntry("connectString", server.getConnectString());
                });
    }

    /**
     * @return what {@code GET /actuator/health/zkcoord} answers an anonymous caller (the web
     *     extension, which applies show-details), once the client has connected (it starts in the
     *     background); null for 404
     */
    private static HealthDescriptor zkcoordHealth(AssertableApplicationContext context) {
        ZkClient client = context.getBean(ZkClient.class);
        Await.until("the client is connected", Duration.ofSeconds(30), () -> client.state().isConnected());
        HealthEndpointWebExtension web = new HealthEndpointWebExtension(context.getBean(HealthContributorRegistry.class),
                null, context.getBean(HealthEndpointGroups.class), null);
        return web.health(ApiVersion.LATEST, WebServerNamespace.SERVER, SecurityContext.NONE, "zkcoord").getBody();
    }
}
