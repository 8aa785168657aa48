package io.zkcoord.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.KeyPaths;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The provider on a client built with {@code aclProvider(path -> acl)}: every node it creates (the
 * root, its missing parents, each lock record) carries the provider's ACL for that node's path.
 */
class AclProviderTest {

    private static TestingServer server;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(ZkClient::close);
    }

    /**
     * An ACL of its own for each path: everyone may do everything (so the test's own reads and
     * writes pass), plus a read grant to an address derived from the path, which tells the ACLs apart.
     */
    static List<ACL> aclOf(String path) {
        int octet = Math.floorMod(path.hashCode(), 250) + 1;
        return List.of(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.ANYONE_ID_UNSAFE),
                new ACL(ZooDefs.Perms.READ, new Id("ip", "10.1." + (path.length() % 250) + "." + octet)));
    }

    /** lock() of a free name is granted, and the root, its parent and each record carry their path's ACL. */
    @Test
    void everyNodeCarriesTheProvidersAclForItsPath() throws Exception {
        Set<String> asked = ConcurrentHashMap.newKeySet();
        ZkClient client = client(path -> {
            asked.add(path);
            return aclOf(path);
        });
        String root = "/acl-shedlock/jobs";
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, root);

        SimpleLock first = take(provider, "nightly-report");
        SimpleLock second = take(provider, "reports/daily");
        assertTrue(provider.lock(config("nightly-report")).isEmpty(), "a held name stays held");
        first.unlock();
        second.unlock();

        List<String> created = List.of("/acl-shedlock", root, KeyPaths.path(root, "nightly-report"),
                KeyPaths.path(root, "reports/daily"));
        for (String path : created) {
            List<ACL> acl = client.zooKeeper().getACL(path, new Stat());
            assertEquals(Set.copyOf(aclOf(path)), Set.copyOf(acl), path + " carries the provider's ACL for its path");
            assertTrue(asked.contains(path), "the provider was asked for " + path);
        }
        assertEquals(Set.copyOf(created), Set.copyOf(asked), "asked for exactly the nodes created");
    }

    /** A used name, taken again after it was freed, keeps its record's ACL (the record is overwritten, not remade). */
    @Test
    void aFreedNameIsTakenAgainUnderTheSameAcl() throws Exception {
        ZkClient client = client(AclProviderTest::aclOf);
        String root = "/acl-shedlock-again";
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, root);
        take(provider, "job").unlock();
        take(provider, "job").unlock();
        String record = KeyPaths.path(root, "job");
        assertEquals(Set.copyOf(aclOf(record)), Set.copyOf(client.zooKeeper().getACL(record, new Stat())));
    }

    /** A provider that fails for a path fails the lock with the project's exception, and creates no record. */
    @Test
    void aFailingAclProviderFailsTheLockAndLeavesNoRecord() throws Exception {
        String root = "/acl-shedlock-failing";
        ZkClient client = client(path -> path.startsWith(root + "/") ? null : aclOf(path));
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, root);
        CoordinationException e = assertThrows(CoordinationException.class, () -> provider.lock(config("job")));
        assertTrue(e.getMessage().contains(KeyPaths.path(root, "job")), e.getMessage());
        assertTrue(client.zooKeeper().exists(KeyPaths.path(root, "job"), false) == null, "no record left");
    }

    private ZkClient client(java.util.function.Function<String, List<ACL>> aclProvider) {
        ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(4)).aclProvider(aclProvider).build();
        clients.add(client);
        return client;
    }

    private static SimpleLock take(ZkcoordLockProvider provider, String name) {
        Optional<SimpleLock> lock = provider.lock(config(name));
        assertTrue(lock.isPresent(), name + " was free");
        return lock.get();
    }

    private static LockConfiguration config(String name) {
        return new LockConfiguration(ClockProvider.now(), name, Duration.ofMinutes(1), Duration.ZERO);
    }
}
