package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ZkClient.Builder.aclProvider}: every node a recipe creates (directories, their missing
 * parents, queue nodes of every recipe) gets the provider's ACL for its own path, as the client
 * names it (a chroot is not part of the path); it and {@code acl(..)} are exclusive.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(120)
class AclProviderTest {

    private static final String CHROOT = "/app";

    private TestingServer server;
    private ZkClient admin;
    private final List<ZkClient> clients = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        admin = client(ZkClient.builder().connectString(server.getConnectString()));
        admin.zooKeeper().create(CHROOT, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    @AfterEach
    void stop() throws Exception {
        for (ZkClient c : clients) {
            c.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private ZkClient client(ZkClient.Builder builder) {
        ZkClient c = builder.sessionTimeout(Duration.ofSeconds(10)).build();
        clients.add(c);
        return c;
    }

    /**
     * An ACL that names the path it was given: everyone may do everything (the test reads it), and
     * a digest id whose user part is the path marks which path the provider was asked for.
     */
    private static List<ACL> marking(String path) {
        return List.of(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.ANYONE_ID_UNSAFE),
                new ACL(ZooDefs.Perms.READ, new Id("digest", path + ":x")));
    }

    /** @return the path the node's ACL was made for (the marker's user part) */
    private String markedPath(String fullPath) throws Exception {
        List<ACL> acl = admin.zooKeeper().getACL(fullPath, new Stat());
        return acl.stream().filter(a -> a.getId().getScheme().equals("digest")).map(a -> a.getId().getId())
                .map(id -> id.substring(0, id.lastIndexOf(':'))).findFirst()
                .orElseThrow(() -> new AssertionError(fullPath + " carries no marker: " + acl));
    }

    /** Each node's ACL was made for its own path: directories exactly, queue nodes up to their sequence number. */
    private void assertMarked(String chroot, String clientPath) throws Exception {
        assertEquals(clientPath, markedPath(chroot + clientPath), "the ACL of " + chroot + clientPath);
    }

    private void assertQueueNodesMarked(String chroot, String dir) throws Exception {
        List<String> children = admin.zooKeeper().getChildren(chroot + dir, false);
        assertFalse(children.isEmpty(), dir + " has queue nodes");
        for (String child : children) {
            String marked = markedPath(chroot + dir + "/" + child);
            assertTrue((dir + "/" + child).startsWith(marked) && marked.startsWith(dir + "/"),
                    "queue node " + dir + "/" + child + " got the ACL asked for with " + marked);
        }
    }

    /**
     * Through a chroot, every recipe's directories (with their missing parents) and queue nodes
     * carry the ACL the provider gave for their path, and the provider saw paths without the chroot.
     */
    @Test
    void everyNodeGetsTheAclOfItsPath() throws Exception {
        Set<String> asked = ConcurrentHashMap.newKeySet();
        Function<String, List<ACL>> provider = path -> {
            asked.add(path);
            return marking(path);
        };
        ZkClient c = client(ZkClient.builder().connectString(server.getConnectString() + CHROOT).aclProvider(provider));
        ZkClient waiterClient = client(ZkClient.builder().connectString(server.getConnectString() + CHROOT)
                .aclProvider(provider));

        ZkMutex mutex = new ZkMutex(c, "/p/locks/mutex");
        ZkReadWriteLock rw = new ZkReadWriteLock(c, "/p/locks/rw");
        ZkSemaphore semaphore = new ZkSemaphore(c, "/p/sem", 2);
        ZkMultiLock multi = new ZkMultiLock(c, List.of("/p/multi/a", "/p/multi/b"));
        try (ZkLease m = mutex.acquire(); ZkLease w = rw.writeLock().acquire(); ZkLease s = semaphore.acquire();
                ZkLease ml = multi.acquire();
                ZkLeaderElection election = new ZkLeaderElection(c, "/p/election", "one");
                ZkLeaderElection second = new ZkLeaderElection(waiterClient, "/p/election", "two")) {
            election.start();
            assertTrue(election.awaitLeadership(Duration.ofSeconds(20)));
            second.start();
            // A waiter too: a read queued behind the write.
            var reader = new ZkReadWriteLock(waiterClient, "/p/locks/rw").readLock().acquireAsync();
            Await.until("the election's second node and the reader queue", Duration.ofSeconds(20), () -> {
                try {
                    return admin.zooKeeper().getChildren(CHROOT + "/p/election", false).size() == 2
                            && admin.zooKeeper().getChildren(CHROOT + "/p/locks/rw", false).size() == 2;
                } catch (Exception e) {
                    return false;
                }
            });

            for (String dir : List.of("/p", "/p/locks", "/p/locks/mutex", "/p/locks/rw", "/p/sem", "/p/multi",
                    "/p/multi/a", "/p/multi/b", "/p/election")) {
                assertMarked(CHROOT, dir);
            }
            for (String dir : List.of("/p/locks/mutex", "/p/locks/rw", "/p/sem", "/p/multi/a", "/p/multi/b",
                    "/p/election")) {
                assertQueueNodesMarked(CHROOT, dir);
            }
            assertTrue(asked.stream().noneMatch(p -> p.startsWith(CHROOT + "/")), "the provider saw client paths only: "
                    + asked);
            reader.cancel(true);
        }
    }

    /** acl(..) and aclProvider(..) cannot both be set, in either order; a null provider is refused. */
    @Test
    void aclAndAclProviderAreExclusive() {
        Function<String, List<ACL>> provider = path -> ZooDefs.Ids.OPEN_ACL_UNSAFE;
        IllegalArgumentException one = assertThrows(IllegalArgumentException.class,
                () -> ZkClient.builder().acl(ZooDefs.Ids.OPEN_ACL_UNSAFE).aclProvider(provider));
        IllegalArgumentException other = assertThrows(IllegalArgumentException.class,
                () -> ZkClient.builder().aclProvider(provider).acl(ZooDefs.Ids.OPEN_ACL_UNSAFE));
        assertTrue(one.getMessage().contains("exclusive") && other.getMessage().contains("exclusive"));
        assertThrows(IllegalArgumentException.class, () -> ZkClient.builder().aclProvider(null));
    }

    /** With a provider, acl() refuses (there is no one ACL) and aclFor(path) asks the provider. */
    @Test
    void aclForAsksTheProvider() {
        ZkClient c = client(ZkClient.builder().connectString(server.getConnectString())
                .aclProvider(AclProviderTest::marking));
        assertEquals(marking("/x/y"), c.aclFor("/x/y"));
        assertThrows(IllegalStateException.class, c::acl);
        ZkClient plain = client(ZkClient.builder().connectString(server.getConnectString()));
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, plain.aclFor("/x/y"));
    }

    /** A provider that gives an empty ACL fails the acquisition with a CoordinationException saying so, and leaves no node. */
    @Test
    void anEmptyAnswerFailsTheAcquisitionCleanly() throws Exception {
        ZkClient c = client(ZkClient.builder().connectString(server.getConnectString())
                .aclProvider(path -> path.startsWith("/bad/dir/") ? List.of() : ZooDefs.Ids.OPEN_ACL_UNSAFE));
        admin.zooKeeper().create("/bad", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        admin.zooKeeper().create("/bad/dir", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        ZkMutex mutex = new ZkMutex(c, "/bad/dir");
        CoordinationException e = assertThrows(CoordinationException.class, () -> mutex.tryLock(10, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("aclProvider"), e.getMessage());
        assertEquals(List.of(), admin.zooKeeper().getChildren("/bad/dir", false), "no queue node left");
        assertFalse(mutex.isHeldByCurrentThread());
    }

    /** A semaphore refuses a provider whose ACL for its queue nodes grants no WRITE. */
    @Test
    void semaphoreNeedsWriteOnItsQueueNodes() {
        List<ACL> readOnly = List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.DELETE | ZooDefs.Perms.CREATE,
                ZooDefs.Ids.ANYONE_ID_UNSAFE));
        ZkClient c = client(ZkClient.builder().connectString(server.getConnectString())
                .aclProvider(path -> path.startsWith("/s/") ? readOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ZkSemaphore(c, "/s", 1));
        assertTrue(e.getMessage().contains("WRITE"), e.getMessage());
        assertInstanceOf(ZkSemaphore.class, new ZkSemaphore(c, "/t", 1), "another path, with WRITE, is fine");
    }
}
