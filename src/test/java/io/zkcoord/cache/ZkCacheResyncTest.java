package io.zkcoord.cache;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.cache.EventLog.Heard;
import io.zkcoord.cache.EventLog.NodeFacts;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Promise 1 and 3 across outages: what changed while the cache could not see it is reported as
 * differences (by czxid and mzxid) after a reconnection, and after a session expiry in the new session.
 */
@Timeout(180)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheResyncTest {

    private static final Duration WAIT = Duration.ofSeconds(40);

    private TestingServer server;
    private ZkProxy proxy;
    private final List<AutoCloseable> open = new ArrayList<>();
    private ZkClient writer;
    private ZkClient watched;

    @BeforeEach
    void start() throws Exception {
        FourLetterWords.enableAllCommands();
        server = new TestingServer(true);
        proxy = ZkProxy.to(server.getConnectString());
        writer = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10)).build();
        watched = ZkClient.builder().connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(4)).build();
        open.add(writer);
        open.add(watched);
    }

    @AfterEach
    void stop() throws Exception {
        Collections.reverse(open);
        for (AutoCloseable c : open) {
            c.close();
        }
        proxy.close();
        server.close();
    }

    private void create(String path, String data) throws Exception {
        writer.zooKeeper().create(path, data.getBytes(UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    private ZkCache startedCache(EventLog log) throws InterruptedException {
        ZkCache cache = new ZkCache(watched, "/r");
        open.add(cache);
        cache.addListener(log);
        cache.start();
        assertTrue(cache.awaitInitialized(WAIT));
        return cache;
    }

    private void assertMirrors(ZkCache cache, EventLog log) {
        Await.until(WAIT, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(writer.zooKeeper(), "/r", Integer.MAX_VALUE, true);
                return tree.equals(TreeRead.of(cache)) && tree.equals(new TreeMap<>(log.replay("/r")));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(writer.zooKeeper(), "/r", Integer.MAX_VALUE, true);
                return "cache: " + TreeRead.difference(tree, TreeRead.of(cache)) + "; events: "
                        + TreeRead.difference(tree, log.replay("/r"));
            } catch (InterruptedException e) {
                return e.toString();
            }
        });
        assertEquals(List.of(), log.violations());
    }

    private void makeTree() throws Exception {
        create("/r", "");
        create("/r/same", "s");
        create("/r/again", "v");
        create("/r/again/kid", "k");
        create("/r/changed", "before");
        create("/r/gone", "g");
    }

    /** The changes an outage hid: the same version on a node made again, a change, a deletion, a creation. */
    private void changeUnseen() throws Exception {
        ZooKeeper zk = writer.zooKeeper();
        zk.delete("/r/again/kid", -1);
        zk.delete("/r/again", -1);
        create("/r/again", "v"); // same data, version 0 again: only czxid tells
        zk.setData("/r/changed", "after".getBytes(UTF_8), -1);
        zk.delete("/r/gone", -1);
        create("/r/new", "n");
    }

    private static List<String> after(EventLog log, int index) {
        return log.heard().subList(index, log.size()).stream().map(Heard::toString).sorted().toList();
    }

    private static final List<String> DIFFERENCES = List.of("changed /r/changed", "created /r/again", "created /r/new",
            "deleted /r/again", "deleted /r/again/kid", "deleted /r/gone");

    /** While disconnected nothing is seen; after reconnecting only the differences are reported. */
    @Test
    void reconnectionReportsOnlyTheDifferences() throws Exception {
        makeTree();
        EventLog log = new EventLog();
        ZkCache cache = startedCache(log);
        long session = watched.sessionId();
        int seen = log.size();
        proxy.stall();
        proxy.cutAll();
        Await.until("the cache's client suspended", WAIT, () -> watched.state() == ConnectionState.SUSPENDED);
        changeUnseen();
        proxy.heal();
        assertMirrors(cache, log);
        assertEquals(session, watched.sessionId(), "the same session");
        assertEquals(DIFFERENCES, after(log, seen));
        List<String> inOrder = log.heard().subList(seen, log.size()).stream().map(Heard::toString).toList();
        assertTrue(inOrder.indexOf("deleted /r/again/kid") < inOrder.indexOf("deleted /r/again"), inOrder.toString());
        assertTrue(inOrder.indexOf("deleted /r/again") < inOrder.indexOf("created /r/again"), inOrder.toString());
        assertEquals(1, FourLetterWords.of(server.getConnectString()).wchsTotal());
    }

    /** After a session expiry the cache loads again in the new session and reports only the differences. */
    @Test
    void sessionExpiryReportsOnlyTheDifferences() throws Exception {
        makeTree();
        EventLog log = new EventLog();
        ZkCache cache = startedCache(log);
        long session = watched.sessionId();
        int seen = log.size();
        proxy.stall();
        changeUnseen();
        SessionExpiry.expireOnServer(watched.zooKeeper(), server.getConnectString(), WAIT);
        proxy.heal();
        Await.until("a new session", WAIT, () -> watched.state().isConnected() && watched.sessionId() != session);
        assertMirrors(cache, log);
        assertNotEquals(session, watched.sessionId());
        assertEquals(DIFFERENCES, after(log, seen));
        create("/r/live", "again");
        assertMirrors(cache, log);
        assertEquals(1, FourLetterWords.of(server.getConnectString()).wchsTotal(), "the new session's watch only");
        cache.close();
        assertEquals(0, FourLetterWords.of(server.getConnectString()).wchsTotal());
        assertEquals(Set.of(), Set.copyOf(log.violations()));
    }
}
