package io.zkcoord.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FourLetterWordsTest {

    static {
        FourLetterWords.enableAllCommands();
    }

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static TestingServer server;
    private static FourLetterWords flw;

    private ZooKeeper watcherZk;
    private ZooKeeper otherZk;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
        flw = FourLetterWords.of(server.getConnectString());
        Await.until(WAIT, () -> {
            try {
                flw.mntr();
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        }, "server answers mntr");
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void connect() throws Exception {
        watcherZk = connect(server.getConnectString());
        otherZk = connect(server.getConnectString());
    }

    @AfterEach
    void disconnect() throws Exception {
        if (watcherZk != null) {
            watcherZk.close();
        }
        if (otherZk != null) {
            otherZk.close();
        }
    }

    static ZooKeeper connect(String connectString) throws Exception {
        ConnectionStates states = new ConnectionStates();
        ZooKeeper zk = new ZooKeeper(connectString, 10_000, states);
        states.awaitCount(KeeperState.SyncConnected, 1, WAIT);
        return zk;
    }

    /** wchp lists an exists-watched path with exactly the watching session's id. */
    @Test
    void wchpListsTheWatchingSession() throws Exception {
        String path = "/flw-wchp";
        otherZk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        assertFalse(flw.wchp().containsKey(path), "nobody watches yet");

        watcherZk.exists(path, event -> { });

        Await.until(WAIT, () -> flw.wchp().containsKey(path), () -> "wchp lists " + path + ": " + flw.wchp());
        assertEquals(Set.of(watcherZk.getSessionId()), flw.wchp().get(path));
        otherZk.delete(path, -1);
    }

    /** Deleting a node watched by one session makes watchesFired grow by exactly 1. */
    @Test
    void deleteOfWatchedNodeFiresExactlyOneWatch() throws Exception {
        String path = "/flw-fired";
        otherZk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        CountDownLatch deleted = new CountDownLatch(1);
        watcherZk.exists(path, event -> {
            if (event.getType() == EventType.NodeDeleted) {
                deleted.countDown();
            }
        });
        long before = flw.watchesFired();

        otherZk.delete(path, -1);

        assertTrue(deleted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "watch delivered");
        // The server adds to the counter just after sending the notifications, so wait for it.
        Await.until(WAIT, () -> flw.watchesFired() > before, "watchesFired grows");
        assertEquals(before + 1, flw.watchesFired());
        // And nothing else fires afterwards: one more round trip through the server to be sure.
        otherZk.exists("/", false);
        assertEquals(before + 1, flw.watchesFired());
    }

    /** A getChildren watch raises zk_watch_count by 1 but leaves the wchs total (data watches) unchanged. */
    @Test
    void childWatchCountsInWatchCountButNotInWchs() throws Exception {
        String path = "/flw-children";
        otherZk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        long watchesBefore = flw.watchCount();
        long wchsBefore = flw.wchsTotal();

        watcherZk.getChildren(path, event -> { });

        assertEquals(watchesBefore + 1, flw.watchCount(), "zk_watch_count counts the child watch");
        assertEquals(wchsBefore, flw.wchsTotal(), "wchs lists data watches only");
        assertFalse(flw.wchp().containsKey(path), "wchp lists data watches only");

        // A data watch on the same path shows in both.
        watcherZk.exists(path, event -> { });
        assertEquals(watchesBefore + 2, flw.watchCount());
        assertEquals(wchsBefore + 1, flw.wchsTotal());
        otherZk.delete(path, -1);
    }

    /** Each mntr call is itself one received packet, and client requests add to zk_packets_received. */
    @Test
    void packetsReceivedCountsRequests() throws Exception {
        // No session open, so no ping can slip in between two mntr calls.
        watcherZk.close();
        otherZk.close();
        watcherZk = null;
        otherZk = null;
        long first = flw.packetsReceived();
        long second = flw.packetsReceived();
        assertEquals(first + 1, second, "one mntr in between");

        otherZk = connect(server.getConnectString());
        long connected = flw.packetsReceived();
        for (int i = 0; i < 5; i++) {
            otherZk.exists("/", false);
        }
        long third = flw.packetsReceived();
        // 5 requests + this mntr; one ping of the open session may slip in, never fewer.
        assertTrue(third - connected >= 6 && third - connected <= 7, "grew by " + (third - connected));
    }

    /** mntr parses into keys and numbers; an unknown key fails loudly instead of reading as 0. */
    @Test
    void mntrParsesAndRejectsUnknownKeys() {
        Map<String, String> mntr = flw.mntr();
        assertTrue(mntr.containsKey("zk_version"), mntr.keySet().toString());
        assertEquals("standalone", mntr.get("zk_server_state"));
        assertEquals("standalone", flw.mode());
        assertTrue(flw.mntrLong("zk_znode_count") >= 1);
        assertThrows(IllegalStateException.class, () -> flw.mntrLong("zk_no_such_key"));
    }

    /** The parsers read the formats ZooKeeper 3.9 prints. */
    @Test
    void parsersReadServerFormats() {
        Map<String, Set<Long>> wchp = FourLetterWords.parseWchp(
                "/locks/a\n\t0x100000abcdef0001\n\t0xffffffffffffffff\n/locks/b\n\t0x2\n");
        assertEquals(Set.of(0x100000abcdef0001L, -1L), wchp.get("/locks/a"));
        assertEquals(Set.of(2L), wchp.get("/locks/b"));
        assertEquals(Map.of(), FourLetterWords.parseWchp(""));
        assertEquals(7, FourLetterWords.parseWchsTotal("2 connections watching 5 paths\nTotal watches:7\n"));
        assertThrows(IllegalArgumentException.class, () -> FourLetterWords.of("a:1,b:2"));
        assertThrows(IllegalArgumentException.class, () -> flw.send("stats"));
    }

}
