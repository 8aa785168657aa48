package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.cache.EventLog.NodeFacts;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The randomized consistency test: several clients make random creates, changes and deletes at
 * random depths, while the cache's connection is cut again and again and its session is expired
 * once on the server. Once quiet, the cache must equal a fresh read of the tree, and so must its
 * listener's events replayed over an empty map, nodes deleted and made again included.
 */
@Timeout(300)
@EnabledIf(value = "io.zkcoord.cache.ZooKeeper39#onClassPath", disabledReason = ZooKeeper39.REASON)
class ZkCacheConsistencyTest {

    private static final Logger log = LoggerFactory.getLogger(ZkCacheConsistencyTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String TOP = "/rand";
    private static final String[] NAMES = {"a", "b", "c"};
    private static final int WRITERS = 3;
    private static final int OPS_PER_WRITER = 400;

    @Test
    void cacheAndReplayedEventsEqualTheTreeAfterCutsAndAnExpiry() throws Exception {
        long seed = Long.getLong("cache.seed", System.nanoTime());
        log.info("seed {} (-Dcache.seed={} repeats this run's choices)", seed, seed);
        Random random = new Random(seed);
        try (TestingServer server = new TestingServer(true); ZkProxy proxy = ZkProxy.to(server.getConnectString())) {
            List<ZkClient> writers = new ArrayList<>();
            for (int i = 0; i < WRITERS; i++) {
                writers.add(ZkClient.builder().connectString(server.getConnectString())
                        .sessionTimeout(Duration.ofSeconds(10)).build());
            }
            ZkClient watched = ZkClient.builder().connectString(proxy.connectString())
                    .sessionTimeout(Duration.ofSeconds(4)).build();
            ZkCache cache = new ZkCache(watched, TOP);
            ZkCache shallow = ZkCache.builder(watched, TOP).maxDepth(2).cacheData(false).build();
            EventLog events = new EventLog();
            EventLog shallowEvents = new EventLog();
            cache.addListener(events);
            shallow.addListener(shallowEvents);
            try {
                writers.get(0).zooKeeper().create(TOP, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                cache.start();
                shallow.start();
                Set<String> madeAgain = ConcurrentHashMap.newKeySet();
                Set<String> everDeleted = ConcurrentHashMap.newKeySet();
                AtomicInteger done = new AtomicInteger();
                ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
                List<Future<?>> work = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    ZooKeeper zk = writers.get(w).zooKeeper();
                    Random mine = new Random(random.nextLong());
                    work.add(pool.submit(() -> {
                        for (int i = 0; i < OPS_PER_WRITER; i++) {
                            randomOp(zk, mine, madeAgain, everDeleted);
                            done.incrementAndGet();
                        }
                        return null;
                    }));
                }
                // Faults while the writers run: cuts, and once a stall with the session expired on the server.
                int total = WRITERS * OPS_PER_WRITER;
                int cuts = 0;
                boolean expired = false;
                while (work.stream().anyMatch(f -> !f.isDone())) {
                    Thread.sleep(50 + random.nextInt(200));
                    if (!expired && done.get() > total / 2) {
                        proxy.stall();
                        SessionExpiry.expireOnServer(watched.zooKeeper(), server.getConnectString(), WAIT);
                        Thread.sleep(random.nextInt(300));
                        proxy.heal();
                        expired = true;
                    } else {
                        proxy.cutAll();
                        cuts++;
                    }
                }
                for (Future<?> f : work) {
                    f.get();
                }
                pool.shutdown();
                log.info("{} ops, {} cuts, expired {}, {} paths made again", total, cuts, expired, madeAgain.size());
                assertTrue(expired, "the session was expired during the run");
                assertTrue(!madeAgain.isEmpty(), "the run made some nodes again");
                assertTrue(cache.awaitInitialized(WAIT));

                ZooKeeper reader = writers.get(0).zooKeeper();
                assertConverges("whole cache", reader, cache, events, Integer.MAX_VALUE, true);
                assertConverges("depth-2 cache without data", reader, shallow, shallowEvents, 2, false);
                assertEquals(List.of(), events.violations());
                assertEquals(List.of(), shallowEvents.violations());
            } finally {
                cache.close();
                shallow.close();
                watched.close();
                writers.forEach(ZkClient::close);
            }
        }
    }

    private static void assertConverges(String what, ZooKeeper reader, ZkCache cache, EventLog events, int depth,
            boolean withData) {
        Await.until(WAIT, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(reader, TOP, depth, withData);
                return tree.equals(TreeRead.of(cache)) && tree.equals(new TreeMap<>(events.replay(TOP)));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, () -> {
            try {
                Map<String, NodeFacts> tree = TreeRead.read(reader, TOP, depth, withData);
                return what + ": cache " + TreeRead.difference(tree, TreeRead.of(cache)) + "; events "
                        + TreeRead.difference(tree, events.replay(TOP));
            } catch (InterruptedException e) {
                return e.toString();
            }
        });
    }

    /** One random create, change or delete at a random depth (1 to 4 below the top). */
    private static void randomOp(ZooKeeper zk, Random r, Set<String> madeAgain, Set<String> everDeleted)
            throws InterruptedException {
        StringBuilder path = new StringBuilder(TOP);
        int depth = 1 + r.nextInt(4);
        for (int d = 0; d < depth; d++) {
            path.append('/').append(NAMES[r.nextInt(NAMES.length)]);
        }
        String p = path.toString();
        byte[] data = new byte[r.nextInt(8)];
        r.nextBytes(data);
        try {
            switch (r.nextInt(3)) {
                case 0 -> {
                    zk.create(p, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                    if (everDeleted.contains(p)) {
                        madeAgain.add(p);
                    }
                }
                case 1 -> zk.setData(p, data, -1);
                default -> {
                    zk.delete(p, -1);
                    everDeleted.add(p);
                }
            }
        } catch (KeeperException.NoNodeException | KeeperException.NodeExistsException | KeeperException.NotEmptyException e) {
            // the random walk asked for something the tree does not allow now
        } catch (KeeperException e) {
            throw new AssertionError(e);
        }
    }
}
