package io.zkcoord;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.lock.ZkMutex;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A connect string whose chroot does not exist yet (a namespace on first use): the client creates
 * it, with its own authorization and ACL, before it reports its first session.
 */
@ZkEnsemble
class ChrootCreationTest {

    private static final Duration WAIT = Duration.ofSeconds(15);

    /** One server for the class: every test roots its clients at a chroot of its own. */
    private ZkTestEnsemble ensemble;
    /** No chroot: sees the whole tree. */
    private ZkClient direct;

    @BeforeEach
    void start(ZkTestEnsemble ensemble, ZkClient direct) {
        this.ensemble = ensemble;
        this.direct = direct;
    }

    /** Curator's namespace test, ported: a node written through a client rooted at a missing /aisa lands under /aisa. */
    @Test
    void aMissingChrootIsCreatedAndPathsLiveUnderIt() throws Exception {
        try (ZkClient client = ZkClient.builder().connectString(ensemble.connectString() + "/aisa")
                .connectionTimeout(WAIT).build()) {
            client.zooKeeper().create("/foo", "hey".getBytes(UTF_8), client.acl(), CreateMode.PERSISTENT);
            assertArrayEquals("hey".getBytes(UTF_8), direct.zooKeeper().getData("/aisa/foo", false, null));
            ZkMutex mutex = new ZkMutex(client, "/locks/a");
            assertTrue(mutex.tryLock(10, TimeUnit.SECONDS));
            mutex.unlock();
        }
    }

    /**
     * The connection drops while the client checks whether its chroot exists (the check's reply is
     * lost): the check is made again once it reconnects, and the chroot is created before the first
     * session is reported; it is not taken as existing.
     */
    @Test
    void aChrootCheckLostWithTheConnectionIsMadeAgain() throws Exception {
        // The ensemble has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString())) {
            var cut = proxy.cutAfterNextExists();
            try (ZkClient client = ZkClient.builder().connectString(proxy.connectString() + "/lost-check")
                    .connectionTimeout(WAIT).build()) {
                assertTrue(cut.isDone(), "the chroot check was not cut");
                assertNotNull(direct.zooKeeper().exists("/lost-check", false), "the chroot was not created");
                ZkMutex mutex = new ZkMutex(client, "/locks/a");
                assertTrue(mutex.tryLock(10, TimeUnit.SECONDS), "no hold under the chroot");
                mutex.unlock();
            }
        }
    }

    /** A chroot several levels deep is created with every missing parent; an existing parent is kept as it was. */
    @Test
    void missingParentsAreCreatedAndExistingOnesKept() throws Exception {
        direct.zooKeeper().create("/apps", "keep".getBytes(UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        try (ZkClient client = ZkClient.builder().connectString(ensemble.connectString() + "/apps/billing/eu")
                .connectionTimeout(WAIT).start()) {
            assertTrue(client.session(WAIT).isPresent(), "no session");
            assertEquals(ConnectionState.CONNECTED, client.state());
            assertNotNull(direct.zooKeeper().exists("/apps/billing/eu", false), "created before CONNECTED");
            assertArrayEquals("keep".getBytes(UTF_8), direct.zooKeeper().getData("/apps", false, null));
        }
    }

    /** With a digest authorization and no ACL, the chroot is created CREATOR_ALL for that identity: others cannot write in it. */
    @Test
    void theChrootIsCreatedWithTheClientsAuthorizationAndAcl() throws Exception {
        String credentials = "app:secret";
        try (ZkClient client = ZkClient.builder().connectString(ensemble.connectString() + "/secured")
                .authorization("digest", credentials.getBytes(UTF_8)).connectionTimeout(WAIT).build()) {
            List<ACL> acl = client.zooKeeper().getACL("/", null); // the chroot itself; reading its ACL needs the identity
            Id creator = new Id("digest", DigestAuthenticationProvider.generateDigest(credentials));
            assertEquals(List.of(new ACL(ZooDefs.Perms.ALL, creator)), acl);
            client.zooKeeper().create("/mine", new byte[0], client.acl(), CreateMode.PERSISTENT);
            assertThrows(KeeperException.NoAuthException.class, () -> direct.zooKeeper()
                    .create("/secured/theirs", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        }
    }

    /** A chroot whose parent forbids creating children: build() fails, saying the chroot cannot be created and why. */
    @Test
    void aChrootThatCannotBeCreatedFailsBuildNamingIt() throws Exception {
        direct.zooKeeper().create("/readonly", new byte[0], ZooDefs.Ids.READ_ACL_UNSAFE, CreateMode.PERSISTENT);
        CoordinationException e = assertThrows(CoordinationException.class, () -> ZkClient.builder()
                .connectString(ensemble.connectString() + "/readonly/app").connectionTimeout(WAIT).build());
        assertTrue(e.getMessage().contains("/readonly/app") && e.getMessage().contains("cannot be created"),
                e.getMessage());
        assertTrue(e.getCause() instanceof KeeperException.NoAuthException, String.valueOf(e.getCause()));
    }
}
