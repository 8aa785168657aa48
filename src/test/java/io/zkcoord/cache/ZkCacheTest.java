package io.zkcoord.cache;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.cache.EventLog.Heard;
import io.zkcoord.cache.EventLog.NodeFacts;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZKUtil;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/** ZkCache against a real server: the first load, live changes, the listeners' order, the API's edges. */
@Timeout(120)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestingServer server;
    private final List<AutoCloseable> open = new ArrayList<>();
    private ZkClient writer;

    @BeforeEach
    void startServer() throws Exception {
        server = new TestingServer(true);
        writer = client();
    }

    @AfterEach
    void stop() throws Exception {
        Collections.reverse(open);
        for (AutoCloseable c : open) {
            c.close();
        }
        server.close();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10))
                .build();
        open.add(c);
        return c;
    }

    private ZkCache started(ZkCache cache, EventLog log) throws InterruptedException {
        open.add(cache);
        if (log != null) {
            cache.addListener(log);
        }
        cache.start();
        assertTrue(cache.awaitInitialized(WAIT), "initialized");
        return cache;
    }

    private ZooKeeper zk() {
        return writer.zooKeeper();
    }

    private void create(String path, String data) throws Exception {
        zk().create(path, data.getBytes(UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    /** Creates {@code path} with {@code data}, and every missing ancestor empty. */
    private void makePath(String path, byte[] data) throws Exception {
        for (int slash = path.indexOf('/', 1); slash > 0; slash = path.indexOf('/', slash + 1)) {
            try {
                zk().create(path.substring(0, slash), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException already) {
                // made before
            }
        }
        zk().create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    private void set(String path, String data) throws Exception {
        zk().setData(path, data.getBytes(UTF_8), -1);
    }

    /** Waits until the cache equals a fresh read of the tree, and the replayed events equal it too. */
    private void assertMirrors(ZkCache cache, EventLog log, String top, int maxDepth, boolean withData) {
        Await.until(WAIT, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(zk(), top, maxDepth, withData);
                return tree.equals(TreeRead.of(cache)) && (log == null || tree.equals(new java.util.TreeMap<>(log.replay(top))));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(zk(), top, maxDepth, withData);
                return "cache: " + TreeRead.difference(tree, TreeRead.of(cache))
                        + (log == null ? "" : "; events: " + TreeRead.difference(tree, log.replay(top)));
            } catch (InterruptedException e) {
                return e.toString();
            }
        });
        if (log != null) {
            assertEquals(List.of(), log.violations());
        }
    }

    /** The first load reports every node as created, parents first, then initialized once; the API reads it. */
    @Test
    void firstLoadReportsEveryNodeThenInitialized() throws Exception {
        create("/app", "top");
        create("/app/a", "1");
        create("/app/a/x", "2");
        create("/app/b", "3");
        create("/app/a/x/deep", "4");
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(client(), "/app"), log);

        List<Heard> heard = log.heard();
        assertEquals(6, heard.size(), heard.toString());
        assertEquals("initialized", heard.get(5).kind());
        assertEquals(Set.of("/app", "/app/a", "/app/a/x", "/app/b", "/app/a/x/deep"),
                Set.copyOf(heard.subList(0, 5).stream().map(Heard::path).toList()));
        assertEquals(1, log.initializedCount());
        assertEquals(5, cache.size());
        assertEquals("2", new String(cache.get("/app/a/x").orElseThrow().data(), UTF_8));
        assertEquals(List.of("a", "b"), List.copyOf(cache.children("/app").keySet()));
        assertEquals("/app/a", cache.children("/app").get("a").path());
        assertTrue(cache.children("/app/b").isEmpty());
        assertTrue(cache.children("/nowhere").isEmpty());
        assertTrue(cache.get("/app/zzz").isEmpty());
        assertTrue(cache.get("/elsewhere").isEmpty());
        assertEquals(5, cache.stream().count());
        assertMirrors(cache, log, "/app", Integer.MAX_VALUE, true);
    }

    /** Creates, changes and deletes at every depth are seen live, and a later listener hears only later changes. */
    @Test
    void liveChangesAtEveryDepth() throws Exception {
        create("/live", "");
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(client(), "/live"), log);
        create("/live/a", "1");
        create("/live/a/b", "2");
        create("/live/a/b/c", "3");
        // Seen first, so that the change below is a change (read together with the creation it would be one created event).
        Await.until("/live/a/b/c seen", WAIT, () -> cache.get("/live/a/b/c").isPresent());
        set("/live/a/b", "2b");
        set("/live", "top");
        assertMirrors(cache, log, "/live", Integer.MAX_VALUE, true);

        EventLog late = new EventLog();
        cache.addListener(late);
        zk().delete("/live/a/b/c", -1);
        create("/live/d", "4");
        assertMirrors(cache, log, "/live", Integer.MAX_VALUE, true);
        Await.until("the late listener hears both changes", WAIT, () -> late.size() == 2);
        assertEquals(List.of("deleted /live/a/b/c", "created /live/d"), late.heard().stream().map(Heard::toString).toList());
        assertEquals(0, late.initializedCount());

        Heard change = log.heard().stream().filter(h -> h.kind().equals("changed") && h.path().equals("/live/a/b"))
                .findFirst().orElseThrow();
        assertEquals("2", new String(change.before().data(), UTF_8));
        assertEquals("2b", new String(change.after().data(), UTF_8));
    }

    /** A path that does not exist yet is an empty cache; its nodes are reported when they appear, and when they go. */
    @Test
    void missingPathIsEmptyUntilMade() throws Exception {
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(client(), "/later/here"), log);
        assertEquals(0, cache.size());
        assertEquals(List.of("initialized"), log.heard().stream().map(Heard::kind).toList());
        makePath("/later/here/child", "x".getBytes(UTF_8));
        assertMirrors(cache, log, "/later/here", Integer.MAX_VALUE, true);
        assertEquals(2, cache.size());
        ZKUtil.deleteRecursive(zk(), "/later");
        assertMirrors(cache, log, "/later/here", Integer.MAX_VALUE, true);
        assertEquals(0, cache.size());
    }

    /** Parents are created before children and children deleted before parents, whatever the pace. */
    @Test
    void parentsBeforeChildrenAndChildrenBeforeParents() throws Exception {
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(client(), "/order"), log);
        for (int round = 0; round < 5; round++) {
            makePath("/order/a/b/c/d", new byte[] {(byte) round});
            create("/order/a/b/x", "x");
            ZKUtil.deleteRecursive(zk(), "/order");
        }
        makePath("/order/a/b", new byte[0]);
        // replay() fails on any child created before its parent or parent deleted before its child.
        assertMirrors(cache, log, "/order", Integer.MAX_VALUE, true);
    }

    /** A node deleted and made again is reported deleted, then created: told by czxid, not version. */
    @Test
    void deletedAndMadeAgainIsReportedAsSuch() throws Exception {
        create("/again", "");
        create("/again/n", "v0");
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(client(), "/again"), log);
        long firstLife = cache.get("/again/n").orElseThrow().stat().getCzxid();
        zk().delete("/again/n", -1);
        create("/again/n", "v0");
        assertMirrors(cache, log, "/again", Integer.MAX_VALUE, true);
        assertTrue(cache.get("/again/n").orElseThrow().stat().getCzxid() > firstLife);
        List<String> after = log.heard().stream().dropWhile(h -> !h.kind().equals("initialized")).skip(1)
                .map(Heard::toString).toList();
        assertEquals(List.of("deleted /again/n", "created /again/n"), after);
    }

    /** Listeners run one at a time, off ZooKeeper's thread; one that throws, even an Error, stops nothing. */
    @Test
    void throwingListenersAreLoggedAndTheOthersGoOn() throws Exception {
        create("/loud", "");
        ZkCache cache = new ZkCache(client(), "/loud");
        AtomicInteger thrown = new AtomicInteger();
        cache.addListener(new CacheListener() {
            @Override
            public void created(CachedNode node) {
                thrown.incrementAndGet();
                throw new AssertionError("a listener's Error");
            }

            @Override
            public void changed(CachedNode before, CachedNode after) {
                thrown.incrementAndGet();
                throw new IllegalStateException("a listener's exception");
            }
        });
        EventLog log = new EventLog();
        started(cache, log);
        create("/loud/a", "1");
        set("/loud/a", "2");
        create("/loud/b", "3");
        assertMirrors(cache, log, "/loud", Integer.MAX_VALUE, true);
        // The thrower was called before the log for every created and changed event the log heard (a
        // change right after a creation may be read with it, as one created event).
        long heard = log.heard().stream().filter(h -> h.kind().equals("created") || h.kind().equals("changed")).count();
        assertTrue(heard >= 3, log.heard().toString());
        assertEquals(heard, thrown.get());
        Set<String> threads = ConcurrentHashMap.newKeySet();
        cache.addListener(new CacheListener() {
            @Override
            public void created(CachedNode node) {
                threads.add(Thread.currentThread().getName());
            }
        });
        create("/loud/c", "4");
        Await.until("heard /loud/c", WAIT, () -> !threads.isEmpty());
        assertFalse(threads.iterator().next().contains("EventThread"), threads.toString());
        assertEquals(List.of(), log.violations());
    }

    /** A listener may call the cache, and close it: no lock of the cache is held while it runs. */
    @Test
    void listenerMayCallAndCloseTheCache() throws Exception {
        create("/reentrant", "");
        ZkCache cache = new ZkCache(client(), "/reentrant");
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        cache.addListener(new CacheListener() {
            @Override
            public void created(CachedNode node) {
                sizes.add(cache.size());
                if (node.path().endsWith("/stop")) {
                    cache.close();
                }
            }
        });
        started(cache, null);
        create("/reentrant/stop", "");
        Await.until("the listener closed the cache", WAIT, () -> cache.toString().contains("closed"));
        assertEquals(2, sizes.get(sizes.size() - 1));
    }

    /** maxDepth 0 holds the node alone; 1 the node and its children; deeper changes are not held. */
    @Test
    void maxDepthBoundsWhatIsHeld() throws Exception {
        makePath("/d/a/b/c", new byte[0]);
        create("/d/e", "");
        EventLog log0 = new EventLog();
        ZkCache zero = started(ZkCache.builder(client(), "/d").maxDepth(0).build(), log0);
        EventLog log1 = new EventLog();
        ZkCache one = started(ZkCache.builder(client(), "/d").maxDepth(1).build(), log1);
        assertEquals(1, zero.size());
        assertEquals(3, one.size());
        create("/d/a/b/c/x", "");
        create("/d/f", "");
        set("/d/a/b", "changed");
        set("/d", "top");
        assertMirrors(zero, log0, "/d", 0, true);
        assertMirrors(one, log1, "/d", 1, true);
        assertTrue(one.get("/d/a/b").isEmpty());
        assertEquals(4, one.size());
    }

    /** cacheData(false) keeps stats only: data() is null, changes are still reported by mzxid. */
    @Test
    void withoutDataOnlyStatsAreKept() throws Exception {
        create("/nodata", "");
        create("/nodata/a", "secret");
        EventLog log = new EventLog();
        ZkCache cache = started(ZkCache.builder(client(), "/nodata").cacheData(false).build(), log);
        assertNull(cache.get("/nodata/a").orElseThrow().data());
        assertEquals(6, cache.get("/nodata/a").orElseThrow().stat().getDataLength());
        set("/nodata/a", "other");
        create("/nodata/a/b", "x");
        assertMirrors(cache, log, "/nodata", Integer.MAX_VALUE, false);
        assertTrue(log.heard().stream().anyMatch(h -> h.kind().equals("changed") && h.after().data() == null));
    }

    /** Changing an array or a Stat got from the cache never changes the cache. */
    @Test
    void arraysHandedOutAreCopies() throws Exception {
        create("/copies", "abc");
        ZkCache cache = started(new ZkCache(client(), "/copies"), null);
        CachedNode node = cache.get("/copies").orElseThrow();
        node.data()[0] = 'X';
        node.stat().setVersion(99);
        assertArrayEquals("abc".getBytes(UTF_8), node.data());
        assertEquals(0, node.stat().getVersion());
        byte[] mine = "mine".getBytes(UTF_8);
        CachedNode made = new CachedNode("/p", mine, node.stat());
        mine[0] = 'Y';
        assertArrayEquals("mine".getBytes(UTF_8), made.data());
        assertArrayEquals("abc".getBytes(UTF_8), cache.get("/copies").orElseThrow().data());
        assertEquals(node, cache.get("/copies").orElseThrow());
    }

    /** Invalid paths fail at once naming the cache; start twice or after close fails; close is idempotent. */
    @Test
    void badInputAndLifecycle() throws Exception {
        ZkClient c = client();
        for (String bad : new String[] {null, "", "relative", "/trailing/", "/double//slash", "/zookeeper/x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ZkCache(c, bad));
            assertTrue(e.getMessage().contains("cache"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> ZkCache.builder(c, bad));
        }
        assertThrows(IllegalArgumentException.class, () -> new ZkCache(null, "/x"));
        assertThrows(IllegalArgumentException.class, () -> ZkCache.builder(c, "/x").maxDepth(-1));
        ZkCache cache = new ZkCache(c, "/x");
        open.add(cache);
        assertThrows(IllegalArgumentException.class, () -> cache.addListener(null));
        assertThrows(IllegalArgumentException.class, () -> cache.get(null));
        assertFalse(cache.awaitInitialized(Duration.ZERO));
        cache.start();
        assertTrue(cache.awaitInitialized(WAIT));
        IllegalStateException twice = assertThrows(IllegalStateException.class, cache::start);
        assertTrue(twice.getMessage().contains("/x"), twice.getMessage());
        cache.close();
        cache.close();
        assertThrows(IllegalStateException.class, cache::start);
        ZkCache never = new ZkCache(c, "/y");
        never.close();
        assertFalse(never.awaitInitialized(Duration.ofSeconds(1)));
        assertThrows(IllegalStateException.class, never::start);
    }

    /** With a chroot, paths are as the client sees them: below the chroot, not naming it. */
    @Test
    void chrootIsNotPartOfThePaths() throws Exception {
        makePath("/root/app/conf/x", "1".getBytes(UTF_8));
        ZkClient rooted = ZkClient.builder().connectString(server.getConnectString() + "/root/app")
                .sessionTimeout(Duration.ofSeconds(10)).build();
        open.add(rooted);
        EventLog log = new EventLog();
        ZkCache cache = started(new ZkCache(rooted, "/conf"), log);
        assertEquals("1", new String(cache.get("/conf/x").orElseThrow().data(), UTF_8));
        create("/root/app/conf/y", "2");
        Await.until("/conf/y seen", WAIT, () -> cache.get("/conf/y").isPresent());
        assertTrue(log.heard().stream().allMatch(h -> h.path() == null || h.path().startsWith("/conf")));
        ZkCache whole = started(new ZkCache(rooted, "/"), null);
        assertTrue(whole.get("/conf/y").isPresent());
    }

    /** A listener removed hears nothing more. */
    @Test
    void removedListenerHearsNothing() throws Exception {
        create("/rm", "");
        EventLog kept = new EventLog();
        EventLog removed = new EventLog();
        ZkCache cache = new ZkCache(client(), "/rm");
        cache.addListener(removed);
        started(cache, kept);
        cache.removeListener(removed);
        int before = removed.size();
        create("/rm/a", "");
        assertMirrors(cache, kept, "/rm", Integer.MAX_VALUE, true);
        assertEquals(before, removed.size());
    }
}
