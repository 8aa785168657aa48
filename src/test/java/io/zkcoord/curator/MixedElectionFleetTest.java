package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.Protocol;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Curator's {@code LeaderLatch} beside {@code ZkLeaderElection}, and {@code LeaderSelector} beside
 * {@code ZkMutex}, with {@link Protocol#CURATOR}, and {@code LeaderSelector} beside {@link
 * ZkLeaderElection#sharingWithLeaderSelector}: exactly one leader at a time, of either library. Each party joins,
 * leads once (a count of leaders, which must be one at every entry) and leaves, many times.
 */
class MixedElectionFleetTest {

    private static final int CYCLES = 25;
    private static final Duration WAIT = Duration.ofMinutes(2);

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    /** Two LeaderLatch clients and two of ours: exactly one leader throughout, every party leads every cycle. */
    @Test
    void latchAndZkcoordElectOneLeader() throws Exception {
        String dir = "/mixed/latch";
        Leaders leaders = new Leaders();
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            List<Callable<Void>> parties = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                CuratorFramework c = fleet.curator();
                String id = "latch-" + i;
                parties.add(() -> {
                    for (int n = 0; n < CYCLES; n++) {
                        try (LeaderLatch latch = new LeaderLatch(c, dir, id)) {
                            latch.start();
                            assertTrue(latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), id + " never led");
                            leaders.lead(id);
                        }
                    }
                    return null;
                });
            }
            parties.addAll(ours(fleet, dir, leaders));
            runAll(parties);
        }
        assertEquals(List.of(), leaders.problems);
        assertEquals(4 * CYCLES, leaders.terms.get());
    }

    /**
     * Two LeaderSelector clients and two {@code ZkMutex} with {@link Protocol#CURATOR} (a selector
     * is a mutex: leading is holding it): exactly one leader throughout, every party leads every cycle.
     */
    @Test
    void selectorAndZkMutexElectOneLeader() throws Exception {
        String dir = "/mixed/selector";
        Leaders leaders = new Leaders();
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            List<Callable<Void>> parties = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                CuratorFramework c = fleet.curator();
                String id = "selector-" + i;
                parties.add(() -> {
                    Semaphore terms = new Semaphore(0);
                    AtomicInteger led = new AtomicInteger();
                    try (LeaderSelector selector = new LeaderSelector(c, dir, new LeaderSelectorListenerAdapter() {
                        @Override
                        public void takeLeadership(CuratorFramework client) {
                            if (led.get() < CYCLES) {
                                leaders.lead(id);
                                led.incrementAndGet();
                                terms.release();
                            }
                        }
                    })) {
                        selector.setId(id);
                        selector.autoRequeue();
                        selector.start();
                        assertTrue(terms.tryAcquire(CYCLES, WAIT.toMillis(), TimeUnit.MILLISECONDS), id + " never led");
                    }
                    return null;
                });
            }
            for (int i = 2; i < 4; i++) {
                ZkMutex leadership = new ZkMutex(fleet.zkcoord(), dir, Protocol.CURATOR);
                String id = "zkcoord-" + i;
                parties.add(() -> {
                    for (int n = 0; n < CYCLES; n++) {
                        leadership.lock();
                        try {
                            leaders.lead(id);
                        } finally {
                            leadership.unlock();
                        }
                    }
                    return null;
                });
            }
            runAll(parties);
        }
        assertEquals(List.of(), leaders.problems);
        assertEquals(4 * CYCLES, leaders.terms.get());
    }

    /**
     * Two LeaderSelector clients and two elections from {@link
     * ZkLeaderElection#sharingWithLeaderSelector}, watched from the server by {@link QueueWitness}:
     * never two leaders, at every term the leader's node heads the directory and belongs to the
     * leader's session, terms in FIFO order of the nodes, every party leads every cycle, and our
     * participants' nodes carry Curator's mutex names.
     */
    @Test
    void selectorAndSharingElectionElectOneLeader() throws Exception {
        String dir = "/mixed/selector-election";
        Set<String> ourNodes = ConcurrentHashMap.newKeySet();
        try (Fleet fleet = new Fleet(server.getConnectString())) {
            io.zkcoord.ZkClient look = fleet.zkcoord();
            QueueWitness witness = new QueueWitness(look.zooKeeper(), dir);
            List<Callable<Void>> parties = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                parties.add(selector(fleet.curator(), dir, "selector-" + i, witness));
            }
            for (int i = 2; i < 4; i++) {
                io.zkcoord.ZkClient z = fleet.zkcoord();
                String id = "zkcoord-" + i;
                parties.add(() -> {
                    for (int n = 0; n < CYCLES; n++) {
                        try (ZkLeaderElection election = ZkLeaderElection.sharingWithLeaderSelector(z, dir, id)) {
                            election.start();
                            assertTrue(election.awaitLeadership(WAIT), id + " never led");
                            witness.enter(id, z.zooKeeper().getSessionId());
                            for (String child : look.zooKeeper().getChildren(dir, false)) {
                                byte[] data;
                                try {
                                    data = look.zooKeeper().getData(dir + "/" + child, false, null);
                                } catch (KeeperException.NoNodeException gone) {
                                    continue; // a selector's node, deleted since the listing
                                }
                                if (id.equals(new String(data, StandardCharsets.UTF_8))) {
                                    ourNodes.add(child);
                                }
                            }
                        }
                    }
                    return null;
                });
            }
            runAll(parties);
            assertEquals(List.of(), witness.problems());
            assertEquals(4L * CYCLES, witness.entries());
            assertEquals(java.util.Map.of("selector", 2L * CYCLES, "zkcoord", 2L * CYCLES), witness.entriesBySide());
        }
        assertEquals(2 * CYCLES, ourNodes.size(), "one node per term of ours, seen while leading: " + ourNodes);
        for (String node : ourNodes) {
            assertTrue(CURATOR_MUTEX_NODE.matcher(node).matches(), node + " is not named as a selector's node");
        }
    }

    private static final Pattern CURATOR_MUTEX_NODE = Pattern.compile(
            "_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}");

    /** A selector that leads {@link #CYCLES} terms, requeued after each, each seen by {@code witness}. */
    private static Callable<Void> selector(CuratorFramework c, String dir, String id, QueueWitness witness) {
        return () -> {
            Semaphore terms = new Semaphore(0);
            AtomicInteger led = new AtomicInteger();
            try (LeaderSelector selector = new LeaderSelector(c, dir, new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework client) throws Exception {
                    if (led.get() < CYCLES) {
                        witness.enter(id, client.getZookeeperClient().getZooKeeper().getSessionId());
                        led.incrementAndGet();
                        terms.release();
                    }
                }
            })) {
                selector.setId(id);
                selector.autoRequeue();
                selector.start();
                assertTrue(terms.tryAcquire(CYCLES, WAIT.toMillis(), TimeUnit.MILLISECONDS), id + " never led");
            }
            return null;
        };
    }

    private static List<Callable<Void>> ours(Fleet fleet, String dir, Leaders leaders) {
        List<Callable<Void>> parties = new ArrayList<>();
        for (int i = 2; i < 4; i++) {
            io.zkcoord.ZkClient z = fleet.zkcoord();
            String id = "zkcoord-" + i;
            parties.add(() -> {
                for (int n = 0; n < CYCLES; n++) {
                    try (ZkLeaderElection election = new ZkLeaderElection(z, dir, id, Protocol.CURATOR)) {
                        election.start();
                        assertTrue(election.awaitLeadership(WAIT), id + " never led");
                        leaders.lead(id);
                    }
                }
                return null;
            });
        }
        return parties;
    }

    private static void runAll(List<Callable<Void>> parties) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(parties.size());
        try {
            List<Future<Void>> runs = new ArrayList<>();
            parties.forEach(p -> runs.add(pool.submit(p)));
            for (Future<Void> f : runs) {
                f.get(10, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Counts leaders: one term is entered with no other leader inside. Thread-safe. */
    private static final class Leaders {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger terms = new AtomicInteger();
        final List<String> problems = Collections.synchronizedList(new ArrayList<>());

        void lead(String id) {
            int now = inside.incrementAndGet();
            if (now != 1) {
                problems.add(id + " leads beside " + (now - 1) + " other leader(s)");
            }
            Thread.yield();
            inside.decrementAndGet();
            terms.incrementAndGet();
        }
    }
}
