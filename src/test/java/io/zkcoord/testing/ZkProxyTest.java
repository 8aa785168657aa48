package io.zkcoord.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ZkProxyTest {

    static {
        FourLetterWords.enableAllCommands();
    }

    private static final Duration WAIT = Duration.ofSeconds(15);
    /** Client read timeout is 2/3 of it; the server expires the session after all of it. */
    private static final int SESSION_TIMEOUT_MS = 6_000;

    private static TestingServer server;
    private static ZooKeeper direct;

    private ZkProxy proxy;
    private ZooKeeper zk;
    private ConnectionStates states;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
        ConnectionStates directStates = new ConnectionStates();
        direct = new ZooKeeper(server.getConnectString(), 30_000, directStates);
        directStates.awaitCount(KeeperState.SyncConnected, 1, WAIT);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (direct != null) {
            direct.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void connectThroughProxy() throws Exception {
        proxy = ZkProxy.to(server.getConnectString());
        states = new ConnectionStates();
        zk = new ZooKeeper(proxy.connectString(), SESSION_TIMEOUT_MS, states);
        states.awaitCount(KeeperState.SyncConnected, 1, WAIT);
    }

    @AfterEach
    void closeAll() throws Exception {
        if (zk != null) {
            zk.close(2_000);
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    /** A raw client works through the proxy in pass-through mode: writes, reads and watches. */
    @Test
    void passesTrafficThrough() throws Exception {
        String path = "/proxy-pass";
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
        zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        assertArrayEquals(data, zk.getData(path, false, null));
        assertNotNull(direct.exists(path, false), "the write reached the server");

        CompletableFuture<Void> changed = new CompletableFuture<>();
        zk.exists(path, event -> changed.complete(null));
        direct.setData(path, new byte[1], -1);
        changed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

        // A large payload crosses many chunks.
        byte[] big = new byte[200_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) i;
        }
        zk.setData(path, big, -1);
        assertArrayEquals(big, zk.getData(path, false, null));
        zk.delete(path, -1);
        assertEquals(1, proxy.openConnections());
    }

    /** stall() stops requests and the client reports Disconnected; heal() reconnects it with the same session. */
    @Test
    void stallDisconnectsAndHealReconnectsSameSession() throws Exception {
        long session = zk.getSessionId();
        assertEquals(SESSION_TIMEOUT_MS, zk.getSessionTimeout(), "negotiated timeout");

        proxy.stall();
        CompletableFuture<Integer> reply = new CompletableFuture<>();
        zk.exists("/", false, (AsyncCallback.StatCallback) (rc, p, ctx, stat) -> reply.complete(rc), null);
        // The client hears nothing within its read timeout (4 s here), then gives up on the connection.
        states.awaitCount(KeeperState.Disconnected, 1, WAIT);
        assertEquals(KeeperException.Code.CONNECTIONLOSS.intValue(),
                reply.get(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                "the request got no reply, only a connection loss");
        assertTrue(direct.exists("/", false) != null, "the server itself is fine");

        proxy.heal();
        states.awaitCount(KeeperState.SyncConnected, 2, WAIT);
        assertEquals(session, zk.getSessionId(), "same session");
        assertEquals(0, states.count(KeeperState.Expired));
        assertNotNull(zk.exists("/", false), "requests flow again");
    }

    /** Connections opened during a stall are held, not connected, and go through after the heal. */
    @Test
    void newConnectionDuringStallWaitsForHeal() throws Exception {
        FourLetterWords flw = FourLetterWords.of(server.getConnectString());
        long connections = flw.mntrLong("zk_num_alive_connections");
        proxy.stall();
        ConnectionStates otherStates = new ConnectionStates();
        ZooKeeper other = new ZooKeeper(proxy.connectString(), 10_000, otherStates);
        try {
            Await.until(WAIT, () -> proxy.connectionsAccepted() >= 2, "second connection accepted");
            // Let the held ConnectRequest sit a moment: a bounded check that it does not connect while stalled.
            assertThrows(AssertionError.class,
                    () -> otherStates.awaitCount(KeeperState.SyncConnected, 1, Duration.ofMillis(300)));
            assertEquals(connections, flw.mntrLong("zk_num_alive_connections"),
                    "the server has no new connection");

            proxy.heal();
            otherStates.awaitCount(KeeperState.SyncConnected, 1, WAIT);
            assertNotNull(other.exists("/", false));
        } finally {
            other.close(2_000);
        }
    }

    /** cutAll() closes the connection: the client sees Disconnected and reconnects through the proxy. */
    @Test
    void cutAllForcesReconnect() throws Exception {
        long session = zk.getSessionId();
        assertEquals(1, proxy.cutAll());
        states.awaitCount(KeeperState.Disconnected, 1, WAIT);
        states.awaitCount(KeeperState.SyncConnected, 2, WAIT);
        assertEquals(session, zk.getSessionId());
        assertNotNull(zk.exists("/", false));
        assertTrue(proxy.connectionsAccepted() >= 2);
    }

    /** A sync EPHEMERAL_SEQUENTIAL create gets CONNECTIONLOSS, yet the server made the node in our session. */
    @Test
    void cutAfterNextCreateLosesTheReplyButNotTheNode() throws Exception {
        String dir = "/proxy-cut";
        direct.create(dir, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        long session = zk.getSessionId();

        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        assertTrue(proxy.isCutArmed());
        // Reads pass while armed.
        assertNotNull(zk.exists(dir, false));
        assertEquals(List.of(), zk.getChildren(dir, false));
        assertFalse(cut.isDone());

        assertThrows(KeeperException.ConnectionLossException.class,
                () -> zk.create(dir + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL_SEQUENTIAL));
        cut.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertFalse(proxy.isCutArmed(), "one-shot");

        states.awaitCount(KeeperState.SyncConnected, 2, WAIT);
        assertEquals(session, zk.getSessionId(), "same session after reconnect");
        List<String> children = zk.getChildren(dir, false);
        assertEquals(1, children.size(), children.toString());
        assertTrue(children.get(0).startsWith("lock-"), children.toString());
        Stat stat = zk.exists(dir + "/" + children.get(0), false);
        assertEquals(session, stat.getEphemeralOwner(), "the node belongs to our session");

        // Disarmed after one use: the next create goes through.
        zk.create(dir + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
        assertEquals(2, zk.getChildren(dir, false).size());
        zk.close();
        zk = null;
        Await.until(WAIT, () -> {
            try {
                return direct.getChildren(dir, false).isEmpty();
            } catch (Exception e) {
                return false;
            }
        }, "ephemerals gone with the session");
        direct.delete(dir, -1);
    }

    /** A multi holding a create, a createContainer and a create2 are each cut, and each create happened. */
    @Test
    void cutAfterNextCreateRecognisesMultiAndContainer() throws Exception {
        String dir = "/proxy-cut-multi";
        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        assertThrows(KeeperException.ConnectionLossException.class,
                () -> zk.multi(List.of(Op.create(dir, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT))));
        cut.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        states.awaitCount(KeeperState.SyncConnected, 2, WAIT);
        assertNotNull(zk.exists(dir, false), "multi's create happened");

        proxy.cutAfterNextCreate();
        assertThrows(KeeperException.ConnectionLossException.class,
                () -> zk.create(dir + "/c", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER));
        states.awaitCount(KeeperState.SyncConnected, 3, WAIT);
        assertNotNull(zk.exists(dir + "/c", false), "createContainer happened");

        // create with a Stat (create2, what a lock uses to learn its czxid).
        proxy.cutAfterNextCreate();
        Stat stat = new Stat();
        assertThrows(KeeperException.ConnectionLossException.class,
                () -> zk.create(dir + "/s", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, stat));
        states.awaitCount(KeeperState.SyncConnected, 4, WAIT);
        assertNotNull(zk.exists(dir + "/s", false), "create2 happened");
        direct.delete(dir + "/s", -1);
        direct.delete(dir + "/c", -1);
        direct.delete(dir, -1);
    }

    /** disarmCut() cancels a pending cut; close() fails a pending cut and stops accepting. */
    @Test
    void disarmAndClose() throws Exception {
        CompletableFuture<Void> cut = proxy.cutAfterNextCreate();
        assertTrue(proxy.disarmCut());
        assertTrue(cut.isCancelled());
        zk.create("/proxy-disarmed", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);

        CompletableFuture<Void> pending = proxy.cutAfterNextCreate();
        proxy.close();
        assertTrue(pending.isCompletedExceptionally());
        states.awaitCount(KeeperState.Disconnected, 1, WAIT);
        assertEquals(0, proxy.openConnections());
    }

    /** The frame scanner finds frame ends and heads across arbitrary chunk boundaries. */
    @Test
    void frameScannerHandlesSplitFrames() {
        // Frame 0: 3-byte payload; frame 1: create2 header (xid 7, type 15) + 4 more bytes; frame 2: empty.
        byte[] stream = {
            0, 0, 0, 3, 9, 9, 9,
            0, 0, 0, 12, 0, 0, 0, 7, 0, 0, 0, 15, 1, 2, 3, 4,
            0, 0, 0, 0,
        };
        for (int chunk = 1; chunk <= stream.length; chunk++) {
            ZkProxy.FrameScanner frames = new ZkProxy.FrameScanner();
            int found = 0;
            for (int start = 0; start < stream.length; start += chunk) {
                int end = Math.min(stream.length, start + chunk);
                int pos = start;
                while (pos < end) {
                    pos += frames.next(stream, pos, end - pos);
                    if (frames.frameComplete()) {
                        if (found == 1) {
                            assertEquals(7, frames.headInt(0));
                            assertTrue(ZkProxy.isCreateRequest(frames));
                            assertEquals(23, pos, "frame 1 ends at byte 23");
                        } else {
                            assertFalse(frames.frameIndex() > 0 && ZkProxy.isCreateRequest(frames));
                        }
                        assertEquals(found, frames.frameIndex());
                        found++;
                    }
                }
            }
            assertEquals(3, found, "chunk size " + chunk);
        }
    }
}
