package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.once.OnceRule;
import io.zkcoord.testing.Await;
import io.zkcoord.value.Versioned;
import io.zkcoord.value.ZkAtomicLong;
import io.zkcoord.value.ZkSharedValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's {@code SharedCount} and {@code DistributedAtomicLong} on the same nodes as {@link
 * ZkSharedValue#ofInt} and {@link ZkAtomicLong}: each sees the other's writes, and together they
 * count exactly. Our exactly-once marker (an ephemeral child of the value node) sits beside the
 * value the whole time: Curator's recipes read and write the node's data only, so they neither
 * see it nor trip over it.
 */
@Timeout(120)
class CuratorValueInteropTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    /** SharedCount and ofInt: each sees the other's sets, and each one's trySet on a stale version is refused. */
    @Test
    void sharedCountAndOfIntSeeEachOther() throws Exception {
        try (Fleet fleet = new Fleet(server.getConnectString());
             SharedCount theirs = new SharedCount(fleet.curator(), "/interop/shared", 5)) {
            theirs.start();
            List<Integer> heardByThem = new CopyOnWriteArrayList<>();
            theirs.addListener(new SharedCountListener() {
                @Override
                public void countHasChanged(SharedCountReader r, int n) {
                    heardByThem.add(n);
                }

                @Override
                public void stateChanged(CuratorFramework c, ConnectionState s) {
                    // connection states are not what this test is about
                }
            });
            ZkClient client = fleet.zkcoord();
            try (ZkSharedValue<Integer> ours = ZkSharedValue.ofInt(client, "/interop/shared", 99)) {
                ours.start();
                assertEquals(5, ours.get().value(), "ours reads the count Curator seeded (our seed not written)");
                assertEquals(theirs.getVersionedValue().getVersion(), ours.get().version());

                ours.set(7);
                Await.until("Curator's SharedCount hears our 7", WAIT, () -> theirs.getCount() == 7);
                Await.until("its listener too", WAIT, () -> heardByThem.contains(7));
                assertEquals(List.of(OnceRule.MARKER_PREFIX + Long.toHexString(client.sessionId())),
                        client.zooKeeper().getChildren("/interop/shared", false),
                        "our marker sits beside the value");

                List<Integer> heardByUs = new CopyOnWriteArrayList<>();
                ours.addListener(v -> heardByUs.add(v.value()));
                theirs.setCount(11);
                Await.until("ours hears Curator's 11", WAIT, () -> ours.get().value() == 11);
                Await.until("our listener too", WAIT, () -> heardByUs.contains(11));

                VersionedValue<Integer> theirsSeen = theirs.getVersionedValue();
                Versioned<Integer> oursSeen = ours.get();
                assertEquals(theirsSeen.getVersion(), oursSeen.version(), "the same node version on both sides");
                assertTrue(ours.trySet(oursSeen, 12));
                assertFalse(theirs.trySetCount(theirsSeen, 13), "Curator's trySet on the version before ours is refused");
                Await.until("Curator sees 12", WAIT, () -> theirs.getCount() == 12);
                VersionedValue<Integer> fresh = theirs.getVersionedValue();
                assertTrue(theirs.trySetCount(fresh, 20), "Curator's trySet on the current version works beside our marker");
                assertFalse(ours.trySet(new Versioned<>(12, fresh.getVersion()), 21),
                        "ours on the version before Curator's is refused");
                Await.until("ours sees 20", WAIT, () -> ours.get().value() == 20);
                assertEquals(20, theirs.getCount());
            }
        }
    }

    /** DistributedAtomicLong and ZkAtomicLong: each reads the other's additions. */
    @Test
    void distributedAtomicLongAndZkAtomicLongSeeEachOther() throws Exception {
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            DistributedAtomicLong theirs = new DistributedAtomicLong(fleet.curator(), "/interop/long",
                    new RetryNTimes(10, 10));
            ZkAtomicLong ours = new ZkAtomicLong(fleet.zkcoord(), "/interop/long");
            assertEquals(0, ours.get(), "missing reads 0 for us");
            AtomicValue<Long> first = theirs.add(40L);
            assertTrue(first.succeeded());
            assertEquals(40, ours.get());
            assertEquals(42, ours.addAndGet(2));
            AtomicValue<Long> read = theirs.get();
            assertTrue(read.succeeded());
            assertEquals(42L, read.postValue(), "Curator reads our addition");
            AtomicValue<Long> inc = theirs.increment();
            assertTrue(inc.succeeded(), "Curator's increment is not refused by our marker beside the value");
            assertEquals(43L, inc.postValue());
            assertEquals(44, ours.incrementAndGet(), "ours adds to Curator's latest");
            assertTrue(ours.compareAndSet(44, 100));
            assertEquals(100L, theirs.get().postValue());
            assertTrue(theirs.compareAndSet(100L, 7L).succeeded());
            assertEquals(7, ours.get());
        }
    }

    /**
     * Two Curator clients and two of ours increment one counter at once: no increment is lost or
     * counted twice (the final value is the number of acknowledged increments) and no value is
     * handed out twice across the two libraries.
     */
    @Test
    void togetherTheyCountExactly() throws Exception {
        int each = 40;
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                // Curator's DistributedAtomicLong gives up under contention (succeeded() false, nothing
                // written): its callers loop, so does this one, counting only what it acknowledged.
                DistributedAtomicLong theirs = new DistributedAtomicLong(fleet.curator(), "/interop/together",
                        new RetryNTimes(3, 5));
                runs.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> got = new ArrayList<>();
                    try {
                        while (got.size() < each) {
                            AtomicValue<Long> v = theirs.increment();
                            if (v.succeeded()) {
                                got.add(v.postValue());
                            }
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    return got;
                }));
                ZkAtomicLong ours = new ZkAtomicLong(fleet.zkcoord(), "/interop/together");
                runs.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> got = new ArrayList<>();
                    for (int n = 0; n < each; n++) {
                        got.add(ours.incrementAndGet());
                    }
                    return got;
                }));
            }
            Set<Long> returned = new HashSet<>();
            for (CompletableFuture<List<Long>> run : runs) {
                for (long v : run.get(90, TimeUnit.SECONDS)) {
                    assertTrue(returned.add(v), "value " + v + " handed out twice");
                }
            }
            long total = 4L * each;
            assertEquals(total, returned.size());
            ZkClient reader = fleet.zkcoord();
            assertEquals(total, new ZkAtomicLong(reader, "/interop/together").get(), "ours reads the exact count");
            DistributedAtomicLong check = new DistributedAtomicLong(fleet.curator(), "/interop/together",
                    new RetryNTimes(3, 5));
            assertEquals(total, check.get().postValue(), "Curator reads the exact count");
            for (long v = 1; v <= total; v++) {
                assertTrue(returned.contains(v), "value " + v + " never handed out");
            }
            List<String> children = reader.zooKeeper().getChildren("/interop/together", false);
            assertEquals(2, children.size(), "one marker per writing session of ours: " + children);
            assertTrue(children.stream().allMatch(OnceRule::isMarker), children.toString());
        }
    }
}
