package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/** Promise 3 (one watch, nothing left after close) and promise 4 (the depth bounds what is read), counted by the server. */
@Timeout(180)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheWatchTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestingServer server;
    private FourLetterWords words;
    private ZkClient client;

    @BeforeEach
    void start() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        words = FourLetterWords.of(server.getConnectString());
        client = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
    }

    private void makeTree(String top, int children, int grandchildren) throws Exception {
        ZooKeeper zk = client.zooKeeper();
        zk.create(top, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        for (int c = 0; c < children; c++) {
            List<Op> ops = new ArrayList<>();
            String child = top + "/c" + c;
            ops.add(Op.create(child, new byte[10], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
            for (int g = 0; g < grandchildren; g++) {
                ops.add(Op.create(child + "/g" + g, new byte[10], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
            }
            zk.multi(ops);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> persistentRecursiveWatches(ZooKeeper zk) throws Exception {
        Method m = ZooKeeper.class.getDeclaredMethod("getPersistentRecursiveWatches");
        m.setAccessible(true);
        return (List<String>) m.invoke(zk);
    }

    private static int connectionListeners(ZkClient c) throws Exception {
        Field f = ZkClient.class.getDeclaredField("lifecycle");
        f.setAccessible(true);
        Object lifecycle = f.get(c);
        Field l = lifecycle.getClass().getDeclaredField("listeners");
        l.setAccessible(true);
        return ((List<?>) l.get(lifecycle)).size();
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).collect(Collectors.toSet());
    }

    /** A started cache holds exactly one watch on the server whatever its size, and none after close. */
    @Test
    void oneWatchWhateverTheSizeAndNoneAfterClose() throws Exception {
        makeTree("/w", 10, 50);
        assertEquals(0, words.wchsTotal());
        ZkCache cache = new ZkCache(client, "/w");
        cache.start();
        assertTrue(cache.awaitInitialized(WAIT));
        assertEquals(511, cache.size());
        assertEquals(1, words.wchsTotal());
        assertEquals(List.of("/w"), persistentRecursiveWatches(client.zooKeeper()));
        client.zooKeeper().setData("/w/c3/g7", new byte[] {1}, -1);
        Await.until("the change seen", WAIT, () -> cache.get("/w/c3/g7").orElseThrow().stat().getVersion() == 1);
        assertEquals(1, words.wchsTotal());
        cache.close();
        assertEquals(0, words.wchsTotal());
        assertEquals(List.of(), persistentRecursiveWatches(client.zooKeeper()));
    }

    /** Two caches of one client on one path share the server's one watch; closing one leaves the other working. */
    @Test
    void twoCachesOnOnePathShareTheWatch() throws Exception {
        makeTree("/two", 1, 0);
        ZkCache first = new ZkCache(client, "/two");
        ZkCache second = new ZkCache(client, "/two");
        first.start();
        second.start();
        assertTrue(first.awaitInitialized(WAIT) && second.awaitInitialized(WAIT));
        assertEquals(1, words.wchsTotal());
        first.close();
        assertEquals(1, words.wchsTotal());
        client.zooKeeper().setData("/two/c0", new byte[] {7}, -1);
        Await.until("the second cache still hears", WAIT, () -> second.get("/two/c0").orElseThrow().stat().getVersion() == 1);
        second.close();
        assertEquals(0, words.wchsTotal());
        assertEquals(List.of(), persistentRecursiveWatches(client.zooKeeper()));
    }

    /** 1,000 caches opened and closed leave the client as it was: no watch, no connection listener, no thread. */
    @Test
    void thousandCachesOpenedAndClosedLeaveNothing() throws Exception {
        makeTree("/many", 2, 0);
        int listenersBefore = connectionListeners(client);
        Set<String> threadsBefore = threadNames();
        for (int i = 0; i < 1_000; i++) {
            ZkCache cache = new ZkCache(client, "/many");
            cache.addListener(new CacheListener() { });
            cache.start();
            assertTrue(cache.awaitInitialized(WAIT));
            assertEquals(3, cache.size());
            cache.close();
        }
        assertEquals(0, words.wchsTotal());
        assertEquals(List.of(), persistentRecursiveWatches(client.zooKeeper()));
        assertEquals(listenersBefore, connectionListeners(client));
        Set<String> newThreads = threadNames();
        newThreads.removeAll(threadsBefore);
        // Only the client's own on-demand callback threads may have come (they expire when idle).
        assertTrue(newThreads.stream().allMatch(n -> n.contains("-callbacks-")), newThreads.toString());
    }

    /**
     * A close() that runs while start() is between taking the STARTED phase and adding its connection
     * listener leaves no listener behind: the start is held inside the client's list (a list that
     * waits on a gate in {@code add}) while the close runs to its end.
     */
    @Test
    void aCloseDuringStartLeavesNoListener() throws Exception {
        int listenersBefore = connectionListeners(client);
        java.util.concurrent.CountDownLatch adding = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        Field l = listenersField();
        @SuppressWarnings("unchecked")
        List<io.zkcoord.ConnectionListener> real = (List<io.zkcoord.ConnectionListener>) l.get(lifecycle(client));
        List<io.zkcoord.ConnectionListener> gated = new java.util.concurrent.CopyOnWriteArrayList<>(real) {
            @Override
            public boolean add(io.zkcoord.ConnectionListener listener) {
                adding.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.add(listener);
            }
        };
        l.set(lifecycle(client), gated);
        try {
            ZkCache cache = new ZkCache(client, "/racing");
            Thread starting = new Thread(cache::start, "starting");
            starting.start();
            assertTrue(adding.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS), "start() adds its listener");
            cache.close(); // runs to its end while start() is held
            gate.countDown();
            starting.join(WAIT.toMillis());
            assertTrue(!starting.isAlive(), "start() returned");
            assertEquals(listenersBefore, connectionListeners(client), "the closed cache left a connection listener");
        } finally {
            gate.countDown();
            l.set(lifecycle(client), real);
            real.clear();
            real.addAll(gated);
        }
    }

    private static Object lifecycle(ZkClient c) throws Exception {
        Field f = ZkClient.class.getDeclaredField("lifecycle");
        f.setAccessible(true);
        return f.get(c);
    }

    private Field listenersField() throws Exception {
        Field l = lifecycle(client).getClass().getDeclaredField("listeners");
        l.setAccessible(true);
        return l;
    }

    /** A depth-1 cache over children with 10,000 grandchildren in all reads none of the grandchildren. */
    @Test
    void depthBoundsWhatIsRead() throws Exception {
        makeTree("/deep", 10, 1_000);
        ZkClient quiet = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(30)).build();
        try {
            long before = words.packetsReceived();
            ZkCache cache = ZkCache.builder(quiet, "/deep").maxDepth(1).build();
            cache.start();
            assertTrue(cache.awaitInitialized(WAIT));
            long requests = words.packetsReceived() - before;
            assertEquals(11, cache.size());
            assertTrue(cache.children("/deep/c0").isEmpty());
            // addWatch, getData and getChildren of the top, getData of 10 children, mntr calls and a ping or two.
            assertTrue(requests < 40, "requests for a depth-1 load: " + requests);
            client.zooKeeper().setData("/deep/c1/g1", new byte[] {1}, -1);
            client.zooKeeper().setData("/deep/c1", new byte[] {1}, -1);
            Await.until("the child's change seen", WAIT, () -> cache.get("/deep/c1").orElseThrow().stat().getVersion() == 1);
            assertTrue(cache.get("/deep/c1/g1").isEmpty());
            cache.close();
        } finally {
            quiet.close();
        }
    }
}
