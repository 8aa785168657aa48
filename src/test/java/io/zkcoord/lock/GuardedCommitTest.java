package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.LockLostException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.ZkProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code commitIfHeld}: the caller's operations land only while the hold's node exists, checked by
 * the server in one {@code multi}. The four outcomes (applied, hold lost, an operation failed,
 * outcome unknown), for thread holds and for leases.
 */
@Timeout(60)
class GuardedCommitTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String DATA = "/guarded/stock";

    private ZkTestEnsemble ensemble;
    private ZkClient client;
    private ZkClient observer;

    /** Every test has a server of its own ({@code @ZkEnsemble} on the method), so it starts from the same data. */
    @BeforeEach
    void start(ZkTestEnsemble ensemble, ZkClient client, ZkClient observer) throws Exception {
        this.ensemble = ensemble;
        this.client = client;
        this.observer = observer;
        observer.zooKeeper().create("/guarded", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        observer.zooKeeper().create(DATA, bytes("2"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    /** Held: the operations are applied and their results returned (not the check's); no operations is a check of the hold. */
    @Test
    @ZkEnsemble
    void appliedWhileHeld() throws Exception {
        ZkMutex mutex = new ZkMutex(client, "/guarded/lock");
        mutex.lock();
        try {
            List<OpResult> results = mutex.commitIfHeld(List.of(Op.setData(DATA, bytes("1"), -1)));
            assertEquals(1, results.size());
            assertInstanceOf(OpResult.SetDataResult.class, results.get(0));
            assertEquals(List.of(), mutex.commitIfHeld(List.of()));
        } finally {
            mutex.unlock();
        }
        assertEquals("1", read());
        try (ZkLease lease = new ZkMutex(client, "/guarded/lock").acquire()) {
            List<OpResult> results = lease.commitIfHeld(List.of(Op.setData(DATA, bytes("0"), -1)));
            assertEquals(1, results.size());
        }
        assertEquals("0", read());
    }

    /** The holder's session expired on the server: LockLostException, nothing applied (thread hold and lease). */
    @Test
    @ZkEnsemble
    void lostHoldAppliesNothing() throws Exception {
        ZkMutex mutex = new ZkMutex(client, "/guarded/lock");
        ZkLease lease = new ZkSemaphore(client, "/guarded/sem", 2).acquire();
        mutex.lock();
        try {
            ensemble.expireSession(client);
            assertThrows(LockLostException.class, () -> mutex.commitIfHeld(List.of(Op.setData(DATA, bytes("9"), -1))));
            assertThrows(LockLostException.class, () -> lease.commitIfHeld(List.of(Op.setData(DATA, bytes("9"), -1))));
        } finally {
            mutex.unlock();
        }
        assertEquals("2", read());
    }

    /** The session lives but the hold's node was deleted from outside: the server's check refuses, LockLostException, nothing applied. */
    @Test
    @ZkEnsemble
    void nodeGoneWhileTheSessionLives() throws Exception {
        try (ZkLease lease = new ZkMutex(client, "/guarded/lock").acquire()) {
            observer.zooKeeper().delete(lease.nodePath(), -1);
            LockLostException e = assertThrows(LockLostException.class,
                    () -> lease.commitIfHeld(List.of(Op.setData(DATA, bytes("8"), -1))));
            assertInstanceOf(KeeperException.NoNodeException.class, e.getCause());
        }
        assertEquals("2", read());
    }

    /** One of the caller's operations fails (bad version): CoordinationException with the KeeperException and its per-op results; nothing applied. */
    @Test
    @ZkEnsemble
    void failingOperationAppliesNothing() throws Exception {
        try (ZkLease lease = new ZkMutex(client, "/guarded/lock").acquire()) {
            CoordinationException e = assertThrows(CoordinationException.class, () -> lease.commitIfHeld(List.of(
                    Op.create("/guarded/order-1", bytes("x"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                    Op.setData(DATA, bytes("1"), 42))));
            assertTrue(!(e instanceof LockLostException), "an operation failed, the hold did not: " + e);
            KeeperException cause = assertInstanceOf(KeeperException.class, e.getCause());
            assertEquals(KeeperException.Code.BADVERSION, cause.code());
            assertNotNull(cause.getResults(), "per-operation results");
            assertEquals(3, cause.getResults().size(), "the check and both operations");
        }
        assertEquals("2", read());
        assertEquals(null, observer.zooKeeper().exists("/guarded/order-1", false), "the create was not applied");
    }

    /** A released lease, and a thread that does not hold, are refused before anything is sent. */
    @Test
    @ZkEnsemble
    void releasedOrNotHeld() throws Exception {
        ZkMutex mutex = new ZkMutex(client, "/guarded/lock");
        assertThrows(IllegalMonitorStateException.class, () -> mutex.commitIfHeld(List.of()));
        ZkLease lease = mutex.acquire();
        lease.release();
        assertThrows(LockLostException.class, () -> lease.commitIfHeld(List.of(Op.setData(DATA, bytes("7"), -1))));
        try (ZkLease held = mutex.acquire()) {
            assertThrows(IllegalArgumentException.class, () -> held.commitIfHeld(null));
        }
        assertEquals("2", read());
    }

    /** The connection is cut after the guarded write reached the server: CommitOutcomeUnknownException, never retried. */
    @Test
    @ZkEnsemble
    void outcomeUnknownWhenTheReplyIsLost() throws Exception {
        // The module has no fault that cuts after one given request: a proxy of its own, to the ensemble.
        try (ZkProxy proxy = ZkProxy.to(ensemble.connectString());
             ZkClient cut = ZkClient.builder().connectString(proxy.connectString())
                     .sessionTimeout(Duration.ofSeconds(10)).build()) {
            try (ZkLease lease = new ZkMutex(cut, "/guarded/lock").acquire()) {
                CompletableFuture<Void> armed = proxy.cutAfterNextMulti();
                assertThrows(CommitOutcomeUnknownException.class,
                        () -> lease.commitIfHeld(List.of(Op.setData(DATA, bytes("5"), -1))));
                armed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            // It reached the server before the cut, and was applied exactly once (not retried).
            assertEquals("5", read());
            assertEquals(1, observer.zooKeeper().exists(DATA, false).getVersion());
        }
    }

    private String read() throws Exception {
        return new String(observer.zooKeeper().getData(DATA, false, null), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
