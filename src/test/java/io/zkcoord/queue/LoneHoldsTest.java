package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.junit.jupiter.api.Test;

/**
 * The lone holds' rule, without a server: which watch a lone grant keeps, and what it tells the
 * release. Events are delivered to the watcher as ZooKeeper's client would deliver them.
 */
class LoneHoldsTest {

    private static final String DIR = "/locks/a";
    private static final String NODE = DIR + "/lock-0000000000";
    private static final long CZXID = 100;

    private final SharedWatches watches = new SharedWatches();
    private final LoneHolds holds = new LoneHolds(watches);

    /**
     * An event with a zxid, made with the 3.9 client's constructor (looked up by name, so that this
     * test compiles with -Dzookeeper.version=3.8.6; there it is skipped: 3.8 events carry no zxid).
     */
    private static WatchedEvent childrenChanged(long zxid) {
        try {
            return WatchedEvent.class.getConstructor(EventType.class, KeeperState.class, String.class, long.class)
                    .newInstance(EventType.NodeChildrenChanged, KeeperState.SyncConnected, DIR, zxid);
        } catch (NoSuchMethodException zookeeper38) {
            assumeTrue(false, "needs the ZooKeeper 3.9 client: its watch events carry a zxid");
            throw new AssertionError("unreachable");
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** A set watch that did not fire: the release may try the removal; the hold leaves the table. */
    @Test
    void aQuietWatchLetsTheReleaseRemove() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.OK);
        holds.held(NODE, CZXID, w);
        assertEquals(1, holds.size());
        assertEquals(Boolean.TRUE, holds.released(NODE));
        assertEquals(0, holds.size());
        assertNull(holds.released(NODE), "released once");
        w.watcher().process(childrenChanged(CZXID + 1)); // the release's own delete fires it
        assertEquals(0, watches.size(), "nobody listened to it any more, and the client dropped it");
    }

    /** Someone queued while held: the release deletes the node alone. */
    @Test
    void aWaitersCreateMakesTheReleaseAPlainDelete() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.OK);
        holds.held(NODE, CZXID, w);
        w.watcher().process(childrenChanged(CZXID + 5));
        assertEquals(Boolean.FALSE, holds.released(NODE));
    }

    /** Someone queued between the create and the granting read's reply: the grant is not alone after all. */
    @Test
    void aChangeAfterOurNodeBeforeTheGrantCounts() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.watcher().process(childrenChanged(CZXID + 1));
        w.answered(Code.OK);
        holds.held(NODE, CZXID, w);
        assertEquals(Boolean.FALSE, holds.released(NODE));
    }

    /**
     * An event of a change before our node (an earlier hold's release in this session) consumed
     * the watch and says nothing of this hold: nothing is kept, and the release looks for itself.
     */
    @Test
    void aChangeBeforeOurNodeIsNotAWatch() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.OK);
        w.watcher().process(childrenChanged(CZXID - 1));
        holds.held(NODE, CZXID, w);
        assertEquals(0, holds.size());
        assertNull(holds.released(NODE));
    }

    /** An event without a zxid (a 3.8 server) may be ours: counted as someone queueing. */
    @Test
    void anEventWithoutZxidCounts() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.OK);
        w.watcher().process(new WatchedEvent(EventType.NodeChildrenChanged, KeeperState.SyncConnected, DIR));
        holds.held(NODE, CZXID, w);
        assertEquals(Boolean.FALSE, holds.released(NODE));
    }

    /** A read that set no watch (it failed), or no watch at all: nothing kept. */
    @Test
    void noWatchNoHold() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.CONNECTIONLOSS);
        holds.held(NODE, CZXID, w);
        holds.held(DIR + "/lock-0000000001", CZXID + 1, null);
        assertEquals(0, holds.size());
        assertNull(holds.released(NODE));
        assertEquals(0, watches.size());
    }

    /** A cancelled watch (the acquisition went on waiting) tells nobody and keeps nothing. */
    @Test
    void aCancelledWatchIsNotKept() {
        LoneHolds.Watch w = holds.watch(DIR);
        w.answered(Code.OK);
        w.cancel();
        holds.held(NODE, CZXID, w);
        assertNull(holds.released(NODE));
    }
}
