package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.ZkProxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ZkSharedValue against a real server: each promise as its own test. */
@Timeout(90)
class ZkSharedValueTest {

    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).build();
    }

    /** start() makes a missing node with the seed (parents too); a second value on it keeps what is there. */
    @Test
    void startSeedsOnlyAMissingNode() throws Exception {
        try (ZkClient c = client();
             ZkSharedValue<Integer> a = ZkSharedValue.ofInt(c, "/shared/seed/count", 7);
             ZkSharedValue<Integer> b = ZkSharedValue.ofInt(c, "/shared/seed/count", 99)) {
            assertThrows(IllegalStateException.class, a::get);
            a.start();
            assertEquals(7, a.get().value());
            b.start();
            assertEquals(7, b.get().value(), "the seed of a later start does not overwrite");
            assertArrayEquals(ByteBuffer.allocate(4).putInt(7).array(),
                    c.zooKeeper().getData("/shared/seed/count", false, null), "4 bytes big-endian, as SharedCount");
            assertThrows(IllegalStateException.class, a::start);
        }
    }

    /** set and trySet: a stale previous fails and shows the newer value; a fresh one writes. */
    @Test
    void setAndTrySet() {
        try (ZkClient c1 = client(); ZkClient c2 = client();
             ZkSharedValue<Long> a = ZkSharedValue.ofLong(c1, "/shared/try", 0);
             ZkSharedValue<Long> b = ZkSharedValue.ofLong(c2, "/shared/try", 0)) {
            a.start();
            b.start();
            Versioned<Long> seen = b.get();
            a.set(5L);
            assertEquals(5L, a.get().value(), "read your own write");
            assertFalse(b.trySet(seen, 6L), "changed since seen");
            assertEquals(5L, b.get().value(), "after false, get() shows the value read");
            assertTrue(b.trySet(b.get(), 6L));
            assertEquals(6L, b.get().value());
            Await.until("a sees b's write", Duration.ofSeconds(10), () -> a.get().value() == 6L);
            assertFalse(a.trySet(new Versioned<>(6L, -1), 7L), "version -1 is never sent");
            assertEquals(6L, b.get().value());
        }
    }

    /** Listeners hear other processes' writes, in order; removed ones hear nothing more. */
    @Test
    void listenersHearChanges() {
        try (ZkClient c1 = client(); ZkClient c2 = client();
             ZkSharedValue<byte[]> a = ZkSharedValue.ofBytes(c1, "/shared/listen", "x".getBytes(StandardCharsets.UTF_8));
             ZkSharedValue<byte[]> b = ZkSharedValue.ofBytes(c2, "/shared/listen", "x".getBytes(StandardCharsets.UTF_8))) {
            a.start();
            b.start();
            List<String> heard = new CopyOnWriteArrayList<>();
            java.util.function.Consumer<Versioned<byte[]>> l = v -> heard.add(new String(v.value(), StandardCharsets.UTF_8));
            a.addListener(l);
            for (String s : List.of("one", "two", "three")) {
                b.set(s.getBytes(StandardCharsets.UTF_8));
                Await.until("a hears " + s, Duration.ofSeconds(10), () -> heard.contains(s));
            }
            assertEquals(List.of("one", "two", "three"), heard);
            a.removeListener(l);
            b.set("four".getBytes(StandardCharsets.UTF_8));
            Await.until("a sees four", Duration.ofSeconds(10),
                    () -> new String(a.get().value(), StandardCharsets.UTF_8).equals("four"));
            assertEquals(3, heard.size());
        }
    }

    /** The value holds one watch on the server while started, and none after close(). */
    @Test
    void oneWatchRemovedOnClose() throws Exception {
        FourLetterWords flw = FourLetterWords.of(server.getConnectString());
        try (ZkClient c = client(); ZkClient writer = client()) {
            long before = flw.watchCount();
            ZkSharedValue<Integer> v = ZkSharedValue.ofInt(c, "/shared/watch", 1);
            v.start();
            ZkSharedValue<Integer> w = ZkSharedValue.ofInt(writer, "/shared/watch", 1);
            w.start();
            w.close();
            Await.until("one watch", Duration.ofSeconds(10), () -> flw.watchCount() == before + 1);
            for (int i = 2; i < 6; i++) {
                ZkSharedValue<Integer> x = ZkSharedValue.ofInt(writer, "/shared/watch", 0);
                x.start();
                x.set(i);
                x.close();
                int expected = i;
                Await.until("seen " + i, Duration.ofSeconds(10), () -> v.get().value() == expected);
            }
            Await.until("still one watch", Duration.ofSeconds(10), () -> flw.watchCount() == before + 1);
            v.close();
            Await.until("no watch after close", Duration.ofSeconds(10), () -> flw.watchCount() == before);
        }
    }

    /** A change made while the client was cut off is seen after it reconnects. */
    @Test
    void changeDuringDisconnectIsSeen() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient c = ZkClient.builder().connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(20)).build();
             ZkClient other = client();
             ZkSharedValue<Integer> v = ZkSharedValue.ofInt(c, "/shared/cut", 1);
             ZkSharedValue<Integer> w = ZkSharedValue.ofInt(other, "/shared/cut", 1)) {
            v.start();
            w.start();
            proxy.cutAll();
            w.set(2);
            Await.until("seen after reconnecting", Duration.ofSeconds(20), () -> v.get().value() == 2);
        }
    }

    /** A deleted node: get() keeps the last value; made again, the new value is seen (a newer czxid, version 0). */
    @Test
    void deletedAndMadeAgain() throws Exception {
        try (ZkClient c = client(); ZkClient other = client();
             ZkSharedValue<Integer> v = ZkSharedValue.ofInt(c, "/shared/again", 1)) {
            v.start();
            ZkSharedValue<Integer> w = ZkSharedValue.ofInt(other, "/shared/again", 1);
            w.start();
            w.set(10);
            w.set(11);
            w.close();
            Await.until("11", Duration.ofSeconds(10), () -> v.get().value() == 11);
            other.close();
            Await.until("the other's marker is gone", Duration.ofSeconds(10), () -> children(c, "/shared/again") <= 1);
            for (String child : c.zooKeeper().getChildren("/shared/again", false)) {
                c.zooKeeper().delete("/shared/again/" + child, -1);
            }
            c.zooKeeper().delete("/shared/again", -1);
            assertEquals(11, v.get().value());
            c.zooKeeper().create("/shared/again", ByteBuffer.allocate(4).putInt(3).array(),
                    org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE, org.apache.zookeeper.CreateMode.PERSISTENT);
            Await.until("the new node's value", Duration.ofSeconds(10), () -> v.get().value() == 3);
            assertEquals(0, v.get().version());
        }
    }

    private static int children(ZkClient c, String path) {
        try {
            return c.zooKeeper().getChildren(path, false).size();
        } catch (Exception e) {
            return -1;
        }
    }

    /**
     * A long node with no data reads 0 (as Curator's {@code DistributedAtomicLong}): a trySet from that value at
     * its version writes, though the bytes of 0 are not the node's (none).
     */
    @Test
    void trySetFromAnEmptyLongNode() throws Exception {
        try (ZkClient c = client()) {
            c.zooKeeper().create("/sharedEmptyLong", new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    org.apache.zookeeper.CreateMode.PERSISTENT);
            try (ZkSharedValue<Long> v = ZkSharedValue.ofLong(c, "/sharedEmptyLong", 9)) {
                v.start();
                Versioned<Long> seen = v.get();
                assertEquals(new Versioned<>(0L, 0), seen);
                assertTrue(v.trySet(seen, 5L), "unchanged since seen");
                assertEquals(5L, v.get().value());
            }
        }
    }

    /** Bad input fails at once. */
    @Test
    void badArguments() {
        try (ZkClient c = client()) {
            assertThrows(IllegalArgumentException.class, () -> ZkSharedValue.ofBytes(c, "/x", null));
            assertThrows(IllegalArgumentException.class, () -> ZkSharedValue.ofInt(c, "x", 1));
            ZkSharedValue<Integer> v = ZkSharedValue.ofInt(c, "/shared/bad", 1);
            assertThrows(IllegalStateException.class, () -> v.set(2));
            v.start();
            assertThrows(IllegalArgumentException.class, () -> v.set(null));
            assertThrows(IllegalArgumentException.class, () -> v.trySet(null, 1));
            v.close();
            assertThrows(IllegalStateException.class, () -> v.set(2));
            v.close();
        }
    }
}
