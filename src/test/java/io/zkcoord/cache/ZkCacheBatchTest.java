package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.cache.EventLog.NodeFacts;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Promise 6: the first load reads many nodes per request (read-only {@code multi} batches), counted by the
 * server; and a batch whose reply the client cannot take (over its {@code jute.maxbuffer}) costs one reconnection,
 * after which the cache reads one node per request and loads all.
 */
@Timeout(180)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheBatchTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private TestingServer server;
    private FourLetterWords words;
    private ZkClient writer;

    @BeforeEach
    void start() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        words = FourLetterWords.of(server.getConnectString());
        writer = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterEach
    void stop() throws Exception {
        writer.close();
        server.close();
    }

    private void makeChildren(String top, int children, int bytes) throws Exception {
        ZooKeeper zk = writer.zooKeeper();
        zk.create(top, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<Op> ops = new ArrayList<>();
        int perRequest = Math.max(1, Math.min(100, 256 * 1024 / Math.max(1, bytes))); // under the server's limit
        for (int c = 0; c < children; c++) {
            byte[] data = new byte[bytes];
            data[0] = (byte) c;
            ops.add(Op.create(top + "/c" + c, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
            if (ops.size() == perRequest || c == children - 1) {
                zk.multi(ops);
                ops.clear();
            }
        }
    }

    /** 1,000 children of 100 bytes: one load costs a few dozen requests, not one per node. */
    @Test
    void aLoadReadsManyNodesPerRequest() throws Exception {
        makeChildren("/many", 1_000, 100);
        try (ZkClient quiet = ZkClient.builder().connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(30)).build()) {
            long before = words.packetsReceived();
            try (ZkCache cache = new ZkCache(quiet, "/many")) {
                cache.start();
                assertTrue(cache.awaitInitialized(WAIT));
                long requests = words.packetsReceived() - before;
                Map<String, NodeFacts> expected = TreeRead.read(writer.zooKeeper(), "/many", Integer.MAX_VALUE, true);
                Map<String, NodeFacts> held = TreeRead.of(cache);
                assertEquals(expected, held, TreeRead.difference(expected, held));
                // addWatch, the top's getData and getChildren, 10 batches of 100, mntr calls and a few pings
                assertTrue(requests < 40, "requests for a load of 1,001 nodes: " + requests);
            }
        }
    }

    /**
     * 100 children of 12 KB each, a client with the default {@code jute.maxbuffer} (1 MB): the first load reads one
     * child alone, then batches the others counted at twice its size, so no reply is over the limit and the client
     * never drops its connection (before the probe, batches guessed at 1 KB a node replied about 1.2 MB).
     */
    @Test
    void aFirstLoadOverSiblingsOfSimilarSizeNeverDropsTheConnection() throws Exception {
        makeChildren("/similar", 100, 12 * 1024);
        try (ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(30)).build()) {
            AtomicInteger suspended = new AtomicInteger();
            client.addConnectionListener(state -> {
                if (state == ConnectionState.SUSPENDED) {
                    suspended.incrementAndGet();
                }
            });
            long before = words.packetsReceived();
            try (ZkCache cache = new ZkCache(client, "/similar")) {
                cache.start();
                assertTrue(cache.awaitInitialized(WAIT), "the cache never loaded");
                long requests = words.packetsReceived() - before;
                Map<String, NodeFacts> expected = TreeRead.read(writer.zooKeeper(), "/similar", Integer.MAX_VALUE, true);
                Map<String, NodeFacts> held = TreeRead.of(cache);
                assertEquals(101, held.size());
                assertEquals(expected, held, TreeRead.difference(expected, held));
                assertEquals(0, suspended.get(), "the first load dropped the client's connection");
                // addWatch, the top's getData and getChildren, one child alone, 10 batches, mntr calls, a few pings
                assertTrue(requests < 40, "requests for a load of 101 nodes: " + requests);
            }
        }
    }

    /**
     * A client whose {@code jute.maxbuffer} is 64 KB, 30 children of 30 KB each but the first listed (read first,
     * alone) of 100 bytes: the first batch's reply (several children, guessed from that small one) is over the limit
     * and the client drops its connection; the cache then loads one node per request, and every node (each fits
     * alone) is loaded, equal to the tree. After a server restart the reload batches again, budgeted by the sizes
     * the cache holds: 60 small children more are read in batches, and the large ones alone, with no second drop.
     */
    @Test
    void aBatchTooLargeForTheClientFallsBackToSingleReads() throws Exception {
        makeChildren("/large", 30, 30 * 1024);
        // the loader reads the first child of the listing alone; the server lists a set of names in one order
        writer.zooKeeper().setData("/large/" + writer.zooKeeper().getChildren("/large", false).get(0), new byte[100], -1);
        ZKClientConfig small = new ZKClientConfig();
        small.setProperty("jute.maxbuffer", Integer.toString(64 * 1024));
        try (ZkClient client = ZkClient.builder().connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(30)).clientConfig(small).build();
                ZkCache cache = new ZkCache(client, "/large")) {
            AtomicInteger suspended = new AtomicInteger();
            client.addConnectionListener(state -> {
                if (state == ConnectionState.SUSPENDED) {
                    suspended.incrementAndGet();
                }
            });
            long session = client.sessionId();
            cache.start();
            assertTrue(cache.awaitInitialized(WAIT), "the cache never loaded");
            Map<String, NodeFacts> expected = TreeRead.read(writer.zooKeeper(), "/large", Integer.MAX_VALUE, true);
            Map<String, NodeFacts> held = TreeRead.of(cache);
            assertEquals(31, held.size());
            assertEquals(expected, held, TreeRead.difference(expected, held));
            assertEquals(session, client.sessionId(), "the reconnection kept the session");
            assertEquals(1, suspended.get(), "the batch too large for the client dropped its connection once");
            // live changes still come, one read each
            writer.zooKeeper().setData("/large/c3", new byte[] {7}, -1);
            Await.until("the change seen", WAIT, () -> cache.get("/large/c3").orElseThrow().stat().getVersion() == 1);

            for (int i = 0; i < 60; i++) {
                writer.zooKeeper().create("/large/s" + i, new byte[100], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT);
            }
            Await.until("the small children seen", WAIT, () -> cache.size() == 91);
            server.restart();
            Await.until("reconnected and loaded again", WAIT, () -> suspended.get() == 2
                    && client.state() == ConnectionState.RECONNECTED);
            writer.zooKeeper().setData("/large/s7", new byte[] {8}, -1); // after the reload: seen live
            Await.until("the change after the reload seen", WAIT,
                    () -> cache.get("/large/s7").orElseThrow().stat().getVersion() == 1);
            expected = TreeRead.read(writer.zooKeeper(), "/large", Integer.MAX_VALUE, true);
            Map<String, NodeFacts> again = TreeRead.of(cache);
            assertEquals(expected, again, TreeRead.difference(expected, again));
            assertEquals(2, suspended.get(), "the reload after the restart dropped the connection again");
        }
    }
}
