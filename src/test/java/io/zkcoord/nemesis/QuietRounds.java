package io.zkcoord.nemesis;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The cache check after each heal of the {@link Schedule}: round {@code n}, for every cache workload, (1) deletes
 * {@code open}, which guards every write, so none can land; (2) creates the marker {@code tree/quiet-<n>}; (3)
 * records the tree ({@code round cache-node}, token {@code n}); (4) waits, up to {@link #COPY_WAIT}, until every
 * running client process whose cache has shown a value has recorded its cache showing the marker ({@code event
 * round-dump} {@code n}: see {@link CacheWorkload}); (5) records how many did ({@code round quiet}); (6) deletes the
 * marker and creates {@code open} again, so the writes go on and the schedule continues. The marker exists only
 * while the tree is quiet, so any copy that shows it must equal the round's tree ({@link Checker}: {@code cache
 * differs}). A process that records nothing in time is slow, not wrong: it is counted, not reported. Used by the
 * schedule's thread only.
 */
final class QuietRounds {

    /** The longest a round waits for the caches' copies. */
    static final Duration COPY_WAIT = Duration.ofSeconds(8);
    /** The longest a round retries one of its own reads or writes while the ensemble settles. */
    private static final Duration OP_WAIT = Duration.ofSeconds(20);

    private final ZooKeeper zk;
    private final List<String> workloads;
    private final List<ClientProcess> clients;
    private final History.Writer log;
    private int round;

    /** @param workloads the cache workloads (the others are left alone) */
    QuietRounds(ZooKeeper zk, List<String> workloads, List<ClientProcess> clients, History.Writer log) {
        this.zk = zk;
        this.workloads = workloads.stream().filter(NemesisRun::isCache).toList();
        this.clients = clients;
        this.log = log;
    }

    /** @return whether there is a cache workload to check */
    boolean any() {
        return !workloads.isEmpty();
    }

    /** @return the rounds run so far */
    int rounds() {
        return round;
    }

    /**
     * Runs the next round; the copies are awaited until {@code copiesBy} (a {@link System#nanoTime()}), at most
     * {@link #COPY_WAIT} and at least a second.
     *
     * @throws IllegalStateException if the ensemble does not answer within {@link #OP_WAIT} (the writes could not be
     *     re-opened)
     */
    void run(long copiesBy) throws InterruptedException {
        int n = ++round;
        for (String w : workloads) {
            String dir = NemesisRun.BASE + "/" + w;
            retry(() -> deleteIfPresent(dir + "/open"));
            retry(() -> createIfMissing(dir + "/tree/" + CacheWorkload.ROUND + n));
            retry(() -> recordTree(w, dir + "/tree", n));
        }
        long now = System.nanoTime();
        long until = now + Math.max(Duration.ofSeconds(1).toNanos(), Math.min(COPY_WAIT.toNanos(), copiesBy - now));
        Set<String> expected = following();
        Set<String> recorded = Set.of();
        while (true) {
            recorded = recorded(n);
            if (recorded.containsAll(expected) || System.nanoTime() - until > 0) {
                break;
            }
            Thread.sleep(200);
        }
        for (String w : workloads) {
            long of = expected.stream().filter(p -> p.endsWith(" " + w)).count();
            long got = recorded.stream().filter(p -> p.endsWith(" " + w) && expected.contains(p)).count();
            log.record(w, "round", "quiet", NemesisRun.BASE + "/" + w + "/tree", n, 0,
                    "copies=" + got + "/" + of + (got < of ? " missing=" + expected.stream()
                            .filter(p -> p.endsWith(" " + w) && !recorded(p, n)).collect(Collectors.joining(","))
                            : ""));
        }
        for (String w : workloads) {
            String dir = NemesisRun.BASE + "/" + w;
            retry(() -> deleteIfPresent(dir + "/tree/" + CacheWorkload.ROUND + n));
            retry(() -> createIfMissing(dir + "/open"));
        }
    }

    /**
     * @return "process workload" of every running process's cache that has shown a value: those the round waits
     *     for (a process restarted a moment ago, its JVM still starting, is not waited for; its copy, if it
     *     records one, is still compared)
     */
    private Set<String> following() {
        Set<String> names = new java.util.HashSet<>();
        for (ClientProcess c : clients) {
            if (c.isRunning()) {
                names.add(c.name());
            }
        }
        List<Path> files = new ArrayList<>();
        clients.forEach(c -> files.addAll(c.histories()));
        try {
            return History.read(files).stream().filter(e -> e.is("event", "seen") && names.contains(e.process())
                    && workloads.contains(e.workload())).map(e -> e.process() + " " + e.workload())
                    .collect(Collectors.toCollection(java.util.TreeSet::new));
        } catch (IOException e) {
            return Set.of();
        }
    }

    private boolean recorded(String processWorkload, int n) {
        return recorded(n).contains(processWorkload);
    }

    /** @return "process workload" of every {@code event round-dump} of round {@code n} so far */
    private Set<String> recorded(int n) {
        List<Path> files = new ArrayList<>();
        clients.forEach(c -> files.addAll(c.histories()));
        try {
            return History.read(files).stream().filter(e -> e.is("event", "round-dump") && e.token() == n)
                    .map(e -> e.process() + " " + e.workload()).collect(Collectors.toSet());
        } catch (IOException e) {
            return Set.of();
        }
    }

    private void recordTree(String workload, String tree, int n) throws KeeperException, InterruptedException {
        List<String[]> nodes = new ArrayList<>();
        List<String> pending = new ArrayList<>(List.of(tree));
        while (!pending.isEmpty()) {
            String path = pending.remove(pending.size() - 1);
            Stat stat = new Stat();
            byte[] data = zk.getData(path, false, stat);
            nodes.add(new String[] {path, CacheWorkload.describe(stat, data)});
            for (String child : zk.getChildren(path, false)) {
                pending.add(path + "/" + child);
            }
        }
        // recorded only once read whole: a retried read records nothing twice
        for (String[] node : nodes) {
            log.record(workload, "round", "cache-node", node[0], n, 0, node[1]);
        }
    }

    private void deleteIfPresent(String path) throws KeeperException, InterruptedException {
        try {
            zk.delete(path, -1);
        } catch (KeeperException.NoNodeException e) {
            // deleted by an earlier attempt
        }
    }

    private void createIfMissing(String path) throws KeeperException, InterruptedException {
        try {
            zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // made by an earlier attempt
        }
    }

    private interface Step {
        void run() throws KeeperException, InterruptedException;
    }

    /** Runs {@code step} again after a connection loss, for up to {@link #OP_WAIT}. */
    private static void retry(Step step) throws InterruptedException {
        long deadline = System.nanoTime() + OP_WAIT.toNanos();
        while (true) {
            try {
                step.run();
                return;
            } catch (KeeperException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("a quiet round's step failed for " + OP_WAIT, e);
                }
                Thread.sleep(100);
            }
        }
    }
}
