package io.zkcoord.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zkcoord.ZkClient;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * A bad path is refused at once with a message that names the recipe it was given to, so a user who
 * passed a relative path to a semaphore is not told about a "lock path". One real server, because every
 * recipe is built on a live client.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecipePathMessagesTest {

    private TestingServer server;
    private ZkClient client;

    @BeforeAll
    void start() throws Exception {
        server = new TestingServer(true);
        client = FaultFixtures.client(server.getConnectString(), Duration.ofSeconds(10));
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Every recipe names itself when its path is relative. */
    @Test
    void aRelativePathIsRefusedInTheRecipesOwnWords() {
        assertRefused("semaphore path must start with '/': rel", () -> new ZkSemaphore(client, "rel", 2));
        assertRefused("mutex path must start with '/': rel", () -> new ZkMutex(client, "rel"));
        assertRefused("read-write lock path must start with '/': rel", () -> new ZkReadWriteLock(client, "rel"));
        assertRefused("multi-lock path must start with '/': rel",
                () -> new ZkMultiLock(client, List.of("/ok", "rel")));
        assertRefused("election path must start with '/': rel", () -> new ZkLeaderElection(client, "rel", "p1"));
        assertRefused("inspected path must start with '/': rel", () -> Inspector.inspect(client, "rel"));
    }

    /** The other path rules name the recipe too. */
    @Test
    void everyPathRuleNamesTheRecipe() {
        assertRefused("semaphore path must not end with '/': /a/", () -> new ZkSemaphore(client, "/a/", 2));
        assertRefused("semaphore path must not contain '//': /a//b", () -> new ZkSemaphore(client, "/a//b", 2));
        assertRefused("semaphore path must not be inside /zookeeper: /zookeeper/x",
                () -> new ZkSemaphore(client, "/zookeeper/x", 2));
        assertRefused("semaphore path must not be null or empty", () -> new ZkSemaphore(client, "", 2));
        assertRefused("election path must not be null or empty", () -> new ZkLeaderElection(client, null, "p1"));
    }

    private static void assertRefused(String message, Executable construction) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, construction);
        assertEquals(message, e.getMessage());
    }
}
