package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.junit.jupiter.api.Test;

/**
 * The sharing of watchers, without a server: one watcher per node while ZooKeeper's client may
 * hold it, every current subscriber told once, a cancelled one never. (That ZooKeeper's client
 * registers one object once however often it is passed is shown against a server by
 * AbandonedWaitWatchersTest.)
 */
class SharedWatchesTest {

    private static final String NODE = "/q/lock-a-0000000001";

    private static WatchedEvent deleted(String path) {
        return new WatchedEvent(EventType.NodeDeleted, KeeperState.SyncConnected, path);
    }

    /** Every wait on a node gets the same watcher while it is armed, and only the waits still subscribed are told. */
    @Test
    void waitsOnOneNodeShareOneWatcher() {
        SharedWatches watches = new SharedWatches();
        List<String> told = new ArrayList<>();
        SharedWatches.Subscription a = watches.watch(SharedWatches.Kind.DATA, NODE, e -> told.add("a"));
        a.answered(Code.OK);
        SharedWatches.Subscription b = watches.watch(SharedWatches.Kind.DATA, NODE, e -> told.add("b"));
        b.answered(Code.OK);
        SharedWatches.Subscription c = watches.watch(SharedWatches.Kind.DATA, NODE, e -> told.add("c"));
        c.answered(Code.OK);
        assertSame(a.watcher(), b.watcher());
        assertSame(a.watcher(), c.watcher());
        b.cancel();
        assertEquals(1, watches.size(), "kept: ZooKeeper's client holds it");

        a.watcher().process(new WatchedEvent(EventType.None, KeeperState.Disconnected, null));
        assertEquals(List.of(), told, "a connection event is not a node event");
        a.watcher().process(deleted(NODE));
        assertEquals(List.of("a", "c"), told);
        assertEquals(0, watches.size(), "fired: the client no longer holds it");
    }

    /** Abandoned waits leave one armed watcher behind, however many: the next wait reuses it. */
    @Test
    void abandonedWaitsLeaveOneWatcher() {
        SharedWatches watches = new SharedWatches();
        SharedWatches.Subscription first = watches.watch(SharedWatches.Kind.DATA, NODE, e -> { });
        first.answered(Code.OK);
        first.cancel();
        for (int i = 0; i < 1_000; i++) {
            SharedWatches.Subscription s = watches.watch(SharedWatches.Kind.DATA, NODE, e -> { });
            assertSame(first.watcher(), s.watcher());
            s.answered(Code.OK);
            s.cancel();
        }
        assertEquals(1, watches.size());
    }

    /** A watch that was never set (the node was gone, the connection dropped) is forgotten once nobody waits. */
    @Test
    void aWatchNeverSetIsForgotten() {
        SharedWatches watches = new SharedWatches();
        SharedWatches.Subscription s = watches.watch(SharedWatches.Kind.DATA, NODE, e -> { });
        s.answered(Code.NONODE);
        assertEquals(1, watches.size(), "still waited on");
        s.cancel();
        assertEquals(0, watches.size());
        SharedWatches.Subscription next = watches.watch(SharedWatches.Kind.DATA, NODE, e -> { });
        assertNotSame(s.watcher(), next.watcher(), "a fresh watcher: the old one is held by nobody");
    }

    /** A request still on its way when the watch fires may set it again: the watcher is kept for that answer. */
    @Test
    void aWatchFiredWhileARequestIsOnItsWayIsKeptForItsAnswer() {
        SharedWatches watches = new SharedWatches();
        List<String> told = new ArrayList<>();
        SharedWatches.Subscription s = watches.watch(SharedWatches.Kind.DATA, NODE, e -> told.add(e.getType().name()));
        s.watcher().process(new WatchedEvent(EventType.NodeDataChanged, KeeperState.SyncConnected, NODE));
        assertEquals(List.of("NodeDataChanged"), told);
        SharedWatches.Subscription again = watches.watch(SharedWatches.Kind.DATA, NODE, e -> { });
        assertSame(s.watcher(), again.watcher(), "the request on its way may arm this very watcher");
        s.answered(Code.OK);
        again.answered(Code.OK);
        again.cancel();
        assertEquals(1, watches.size());
    }

    /** Data and children watches of one path are apart. */
    @Test
    void dataAndChildrenWatchesAreApart() {
        SharedWatches watches = new SharedWatches();
        SharedWatches.Subscription data = watches.watch(SharedWatches.Kind.DATA, "/q", e -> { });
        SharedWatches.Subscription children = watches.watch(SharedWatches.Kind.CHILDREN, "/q", e -> { });
        assertNotSame(data.watcher(), children.watcher());
        assertEquals(2, watches.size());
    }
}
