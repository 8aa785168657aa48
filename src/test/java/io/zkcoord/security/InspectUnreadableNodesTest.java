package io.zkcoord.security;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.inspect.QueueSnapshot.Entry;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Inspector where the directory is readable but the nodes in it are not: alice's directories
 * under {@code /shared} let anyone READ (list) them, and each queue node alice makes is hers alone.
 * bob inspects: every node is reported, in queue order, as "not authorized", with its kind and
 * sequence from its name and holding as its recipe's rule says from its place; what only its data
 * and stat would tell (owner, token, session, creation time) is marked unknown; none is left out.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(120)
class InspectUnreadableNodesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    final ServerPerTest servers = new ServerPerTest();

    /** alice: directories under /shared readable by anyone, her queue nodes hers alone. */
    private ZkClient alice() throws Exception {
        Id alice = new Id("digest", DigestAuthenticationProvider.generateDigest(DigestHostileClientTest.ALICE));
        List<ACL> aliceOnly = List.of(new ACL(ZooDefs.Perms.ALL, alice));
        List<ACL> listable = List.of(new ACL(ZooDefs.Perms.ALL, alice),
                new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        return servers.client(ZkClient.builder()
                .authorization("digest", DigestHostileClientTest.ALICE.getBytes(UTF_8))
                .aclProvider(path -> !path.startsWith("/shared") ? ZooDefs.Ids.OPEN_ACL_UNSAFE
                        : path.chars().filter(c -> c == '/').count() > 2 ? aliceOnly : listable));
    }

    /** A mutex alice holds and waits on: bob sees both nodes, not authorized, the holder holding, in queue order. */
    @Test
    void nodesBobMayNotReadAreReportedNotOmitted() throws Exception {
        ZkClient holder = alice();
        ZkClient waiter = alice();
        ZkClient bob = servers.client(
                ZkClient.builder().authorization("digest", DigestHostileClientTest.BOB.getBytes(UTF_8)));
        String dir = "/shared/mutex";
        try (ZkLease hold = new ZkMutex(holder, dir).acquire()) {
            CompletableFuture<ZkLease> waiting = new ZkMutex(waiter, dir).acquireAsync();
            Await.until("alice's waiter queued", WAIT, () -> children(holder, dir) == 2);

            QueueSnapshot seenByBob = Inspector.inspect(bob, dir);
            assertEquals(2, seenByBob.entries().size(), "no node left out: " + seenByBob);
            assertEquals(seenByBob.entries(), seenByBob.notAuthorized(), "both are reported not authorized");
            Entry first = seenByBob.entries().get(0);
            Entry second = seenByBob.entries().get(1);
            assertEquals(hold.nodePath().substring(dir.length() + 1), first.nodeName());
            assertEquals("lock", first.kind());
            assertTrue(first.holding(), "the holder holds, by the rule, from its place in the queue");
            assertFalse(second.holding(), "the waiter waits");
            assertTrue(first.sequence() < second.sequence(), "queue order");
            for (Entry e : seenByBob.entries()) {
                assertEquals(-1, e.fencingToken(), "unknown: " + e);
                assertEquals(0, e.sessionId(), "unknown: " + e);
                assertEquals(null, e.created(), "unknown: " + e);
                assertEquals("", e.ownerHost(), "the owner data was not read: " + e);
                assertEquals(-1, e.ownerPid());
                assertEquals("", e.ownerThread());
            }

            QueueSnapshot seenByAlice = Inspector.inspect(holder, dir);
            assertEquals(List.of(), seenByAlice.notAuthorized(), "alice reads her own nodes");
            assertEquals(ProcessHandle.current().pid(), seenByAlice.entries().get(0).ownerPid());
            assertEquals(hold.fencingToken(), seenByAlice.entries().get(0).fencingToken());
            assertEquals(seenByBob.entries().stream().map(Entry::nodeName).toList(),
                    seenByAlice.entries().stream().map(Entry::nodeName).toList(), "the same queue");
            SecretsInLogs.assertClean("bob's snapshot", seenByBob.toString());
            waiting.cancel(true);
        }
    }

    /** A semaphore of 2 permits, 3 of alice's nodes: bob sees the first two holding and the third waiting, none readable. */
    @Test
    void theRuleCountsUnreadableNodes() throws Exception {
        ZkClient a = alice();
        ZkClient bob = servers.client(ZkClient.builder());
        String dir = "/shared/sem";
        ZkSemaphore semaphore = new ZkSemaphore(a, dir, 2);
        ZkLease one = semaphore.acquire();
        ZkLease two = semaphore.acquire();
        CompletableFuture<ZkLease> third = semaphore.acquireAsync();
        Await.until("the third queued", WAIT, () -> children(a, dir) == 3);
        QueueSnapshot s = Inspector.inspect(bob, dir);
        assertEquals(3, s.notAuthorized().size(), s.toString());
        assertEquals(List.of(true, true, false), s.entries().stream().map(Entry::holding).toList(), s.toString());
        assertEquals(List.of(nameOf(one), nameOf(two)), s.holders().stream().map(Entry::nodeName).toList());
        third.cancel(true);
        one.release();
        two.release();
    }

    private static String nameOf(ZkLease lease) {
        return lease.nodePath().substring(lease.nodePath().lastIndexOf('/') + 1);
    }

    private static int children(ZkClient c, String dir) {
        try {
            return c.zooKeeper().getChildren(dir, false).size();
        } catch (Exception e) {
            return -1;
        }
    }
}
