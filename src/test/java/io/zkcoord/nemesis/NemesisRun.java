package io.zkcoord.nemesis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One nemesis run: an ensemble of server processes, client processes running the workloads through their own
 * proxies, the randomized fault schedule for the given time, then the final heal, the liveness checks, the merged
 * history and the {@link Checker}'s verdict. Everything it started is stopped before it returns.
 *
 * <p>Steps: (1) start the ensemble and wait for a quorum; (2) create the workloads' directories and registers;
 * (3) start the client processes (and, if the config asks, wait up to three minutes until every workload has
 * been granted); (4) run the
 * {@link Schedule}, with a {@link QuietRounds} round of the cache workloads at each heal; (5) let every pause that ends at a handoff see it, end every other fault, heal every link,
 * restart any server still down and wait for a quorum ({@code final healed}); (6) wait up to a minute until every workload is
 * granted again; (6b) for each cache workload, end its writes for good and record its tree ({@code final
 * cache-node}); (7) ask every client to stop ({@code final exit}: each must exit within a minute); (8) wait until
 * no node is left in any workload's directory ({@code final leftover}); (9) read the registers ({@code final
 * register}); (10) merge the histories into {@code history.txt} and check it.
 */
final class NemesisRun {

    private static final Logger LOG = LoggerFactory.getLogger(NemesisRun.class);
    static final String BASE = "/nemesis";
    private static final Duration QUORUM_WAIT = Duration.ofSeconds(90);
    private static final Duration PROGRESS_WAIT = Duration.ofSeconds(60);
    /** The longest the schedule waits for every workload's first grant (client JVMs starting on a busy machine). */
    private static final Duration START_WAIT = Duration.ofSeconds(180);
    private static final Duration EXIT_WAIT = Duration.ofSeconds(60);
    private static final Duration LEFTOVER_WAIT = Duration.ofSeconds(30);

    /**
     * What to run. With {@code faultsOnceRunning} the schedule starts once every workload has been granted (up to
     * three minutes), so that a slow machine's client start-up takes none of its time; else at once, while the clients
     * start.
     */
    record Config(int servers, int clients, List<String> workloads, List<Faults.Kind> faults, Duration duration,
            long seed, Duration session, Path outDir, boolean faultsOnceRunning) {

        /** Faults from the start. */
        Config(int servers, int clients, List<String> workloads, List<Faults.Kind> faults, Duration duration,
                long seed, Duration session, Path outDir) {
            this(servers, clients, workloads, faults, duration, seed, session, outDir, false);
        }
    }

    /** What came out. */
    record Outcome(Config config, Checker.Result result, Path history, int faultsStarted, Duration wall,
            List<Integer> serversExited) {

        String table() {
            StringBuilder b = new StringBuilder();
            b.append(String.format("nemesis run: seed=%d (-Dnemesis.seed=%d), %d servers, %d clients, %d s of faults,"
                    + " %d faults started, wall %d s%n", config.seed(), config.seed(), config.servers(),
                    config.clients(), config.duration().toSeconds(), faultsStarted, wall.toSeconds()));
            b.append(String.format("%-10s %7s %7s %9s %8s %14s %10s %19s%n", "workload", "ops", "grants",
                    "writes ok", "unknown", "stale refused", "violations", "longest unavail ms"));
            for (Map.Entry<String, Checker.Stats> e : result.stats().entrySet()) {
                if (e.getKey().isEmpty() || e.getKey().equals("-")) {
                    continue;
                }
                Checker.Stats s = e.getValue();
                b.append(String.format("%-10s %7d %7d %9d %8d %14d %10d %19d%n", e.getKey(), s.operations, s.grants,
                        s.writesAccepted, s.writesUnknown, s.staleRefused, s.violations,
                        TimeUnit.NANOSECONDS.toMillis(s.longestUnavailableNanos)));
            }
            b.append(String.format("%-17s %8s %14s%n", "fault", "injected", "total ms"));
            for (Map.Entry<String, long[]> e : result.faults().entrySet()) {
                b.append(String.format("%-17s %8d %14d%n", e.getKey(), e.getValue()[0],
                        TimeUnit.NANOSECONDS.toMillis(e.getValue()[1])));
            }
            if (!serversExited.isEmpty()) {
                b.append("servers that exited instead of restarting on their data (ZooKeeper, not zkcoord; see the"
                        + " run's log): ").append(serversExited).append(System.lineSeparator());
            }
            for (Map.Entry<String, Checker.Stats> e : result.stats().entrySet()) {
                if (isCache(e.getKey())) {
                    b.append(String.format("%s: %d quiet rounds after a heal compared (%d copies), final copies %d%n",
                            e.getKey(), e.getValue().roundsCompared, e.getValue().roundCopiesCompared,
                            e.getValue().cachesCompared));
                }
            }
            Checker.Stats other = result.stats().get("-");
            b.append("violations: ").append(result.violations().size())
                    .append(other != null && other.violations > 0 ? " (" + other.violations + " not of a workload)" : "")
                    .append(System.lineSeparator());
            for (Checker.Violation v : result.violations().subList(0, Math.min(20, result.violations().size()))) {
                b.append("  ").append(v).append(System.lineSeparator());
            }
            b.append("history: ").append(history);
            return b.toString();
        }
    }

    private NemesisRun() {
    }

    static Outcome run(Config config) throws Exception {
        long began = System.nanoTime();
        Path dir = config.outDir().resolve("seed-" + config.seed());
        Ensemble.deleteTree(dir);
        Files.createDirectories(dir);
        Random random = new Random(config.seed());
        List<ClientProcess> clients = new ArrayList<>();
        Path nemesisFile = dir.resolve("nemesis.history");
        int started;
        List<Integer> crashedOnRestart;
        try (History.Writer log = new History.Writer(nemesisFile, "nemesis");
                Ensemble ensemble = Ensemble.start(config.servers(), dir.resolve("servers"), QUORUM_WAIT)) {
            ZooKeeper observer = new ZooKeeper(String.join(",", ensemble.clientAddresses()), 10_000, event -> { });
            try {
                List<String> holdDirs = prepare(observer, config.workloads());
                List<String> args = List.of(Long.toString(config.session().toMillis()), BASE,
                        Long.toString(config.seed()), String.join(",", config.workloads()));
                for (int slot = 1; slot <= config.clients(); slot++) {
                    ClientProcess c = new ClientProcess(slot, ensemble.clientAddresses(), dir, args);
                    clients.add(c);
                    c.start(log);
                }
                // The entity workload's many keys are mostly idle: a pause aimed at "the holder" picks among
                // the other workloads' directories, as before, rather than mostly missing.
                Faults faults = new Faults(ensemble, clients, log, random, config.session().toMillis(), observer,
                        holdDirs.stream().filter(d -> !d.startsWith(BASE + "/entity/")).toList());
                if (config.faultsOnceRunning()) {
                    awaitCondition(START_WAIT,
                            () -> everyWorkloadGranted(clients, config.workloads(), Long.MIN_VALUE));
                }
                // after each heal of the schedule, the caches are checked as after the final one
                QuietRounds rounds = new QuietRounds(observer, config.workloads(), clients, log);
                Schedule.HealPoint heal = rounds.any() ? rounds::run : runEnd -> { };
                started = new Schedule(faults, config.faults(), random, log, ensemble, heal).run(config.duration());

                // the final heal
                faults.awaitHandoffs();
                faults.endAll();
                ensemble.links().healAll();
                clients.forEach(ClientProcess::healAll);
                for (ServerProcess s : ensemble.servers()) {
                    s.start(); // a no-op when running
                }
                for (ClientProcess c : clients) {
                    if (!c.isRunning()) {
                        c.start(log);
                    }
                }
                crashedOnRestart = ensemble.awaitQuorumOrCrashed(QUORUM_WAIT);
                for (int id : crashedOnRestart) {
                    String tail = ensemble.logTail(id);
                    LOG.warn("server {} exited instead of restarting on its data (a ZooKeeper server failure; the run"
                            + " goes on with the quorum):\n{}", id, tail);
                    log.record("", "final", "server-exited", "s" + id, 0, 0, lastLine(tail));
                }
                long healed = log.record("", "final", "healed", "", 0, 0, ensemble.describe()).time();
                LOG.info("healed; waiting for every workload to be granted again");
                awaitCondition(PROGRESS_WAIT, () -> everyWorkloadGranted(clients, config.workloads(), healed));
                for (String w : config.workloads()) {
                    if (isCache(w)) {
                        quietTree(observer, BASE + "/" + w, log);
                    }
                }
                for (ClientProcess c : clients) {
                    String name = c.name();
                    boolean exited = c.stop(EXIT_WAIT);
                    log.record("", "final", "exit", name, 0, 0, exited ? "ok" : "timeout after " + EXIT_WAIT);
                    c.kill();
                }
                for (String holdDir : holdDirs) {
                    awaitCondition(LEFTOVER_WAIT, () -> children(observer, holdDir) == 0);
                    log.record(workloadOf(holdDir), "final", "leftover", holdDir, 0, 0,
                            Integer.toString(children(observer, holdDir)));
                }
                for (String w : config.workloads()) {
                    for (String register : registers(w)) {
                        byte[] data = observer.getData(register, false, null);
                        log.record(w, "final", "register", register, 0, 0, w.equals("counter")
                                ? CounterWorkload.registerText(data) : new String(data, StandardCharsets.UTF_8));
                    }
                }
            } finally {
                observer.close();
                clients.forEach(ClientProcess::close);
            }
        }
        List<Path> files = new ArrayList<>(List.of(nemesisFile));
        clients.forEach(c -> files.addAll(c.histories()));
        List<History.Event> events = History.read(files);
        Path history = dir.resolve("history.txt");
        History.write(events, history);
        Checker.Result result = Checker.check(events);
        return new Outcome(config, result, history, started, Duration.ofNanos(System.nanoTime() - began),
                crashedOnRestart);
    }

    static boolean isCache(String w) {
        return w.equals("cache") || w.equals("naivecache");
    }

    /**
     * Ends the writes of cache workload {@code dir} for good (deletes {@code open}, which guards every write), makes
     * {@code tree/quiet}, the tree's last change, and records the whole tree ({@code final cache-node}), which every
     * cache must end equal to.
     */
    private static void quietTree(ZooKeeper zk, String dir, History.Writer log) throws Exception {
        try {
            zk.delete(dir + "/open", -1);
        } catch (KeeperException.NoNodeException e) {
            // deleted by an earlier attempt
        }
        createIfMissing(zk, dir + "/tree/" + CacheWorkload.QUIET, new byte[0]);
        String workload = dir.substring(BASE.length() + 1);
        List<String> pending = new ArrayList<>(List.of(dir + "/tree"));
        while (!pending.isEmpty()) {
            String path = pending.remove(pending.size() - 1);
            org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
            byte[] data = zk.getData(path, false, stat);
            log.record(workload, "final", "cache-node", path, stat.getMzxid(), 0, CacheWorkload.describe(stat, data));
            for (String child : zk.getChildren(path, false)) {
                pending.add(path + "/" + child);
            }
        }
    }

    /** @return the last non-empty line of {@code text} */
    private static String lastLine(String text) {
        String[] lines = text.strip().split("\n");
        return lines.length == 0 ? "" : lines[lines.length - 1].strip();
    }

    /** Creates {@code /nemesis/<workload>} and its register; @return the directories whose first node holds */
    private static List<String> prepare(ZooKeeper zk, List<String> workloads) throws Exception {
        List<String> holdDirs = new ArrayList<>();
        createIfMissing(zk, BASE, new byte[0]);
        for (String w : workloads) {
            createIfMissing(zk, BASE + "/" + w, new byte[0]);
            for (String register : registers(w)) {
                createIfMissing(zk, register, w.equals("counter") ? CounterWorkload.initial() : Register.initial());
            }
            if (w.equals("counter")) {
                continue; // no lock: its node's only children are the writers' ephemeral markers
            }
            // the recipes create their directories (a semaphore's carries its permit count)
            if (w.equals("shards")) {
                // the shard locks and the members; the group's coordinator election and assignment stay
                for (int k = 0; k < ShardWorkload.SHARDS; k++) {
                    holdDirs.add(BASE + "/shards/group/shard-" + k);
                }
                holdDirs.add(BASE + "/shards/group/members");
                continue;
            }
            if (w.equals("entity")) {
                EntityWorkload.keys().forEach(k -> holdDirs.add(BASE + "/entity/" + k));
                continue;
            }
            if (isCache(w)) {
                createIfMissing(zk, BASE + "/" + w + "/tree", new byte[0]);
                createIfMissing(zk, BASE + "/" + w + "/open", new byte[0]);
                continue;
            }
            String holdDir = BASE + "/" + w + (w.equals("election") ? "/election" : w.equals("multi") ? "/lock-a"
                    : "/lock");
            if (!w.equals("unlocked")) {
                holdDirs.add(holdDir);
            }
            if (w.equals("multi")) {
                holdDirs.add(BASE + "/multi/lock-b");
                holdDirs.add(BASE + "/multi/lock-c");
            }
        }
        return holdDirs;
    }

    /** The registers of workload {@code w}: one, none for a cache workload, or one per path of the multi-lock workload. */
    private static List<String> registers(String w) {
        if (isCache(w)) {
            return List.of();
        }
        if (w.equals("multi")) {
            return MultiLockWorkload.KEYS.stream().map(k -> BASE + "/multi/register-" + k).toList();
        }
        if (w.equals("shards")) {
            return java.util.stream.IntStream.range(0, ShardWorkload.SHARDS)
                    .mapToObj(k -> ShardWorkload.register(BASE + "/shards", k)).toList();
        }
        if (w.equals("counter")) {
            return List.of(BASE + "/counter/" + CounterWorkload.NODE);
        }
        if (w.equals("entity")) {
            return java.util.stream.IntStream.range(0, EntityWorkload.KEYS).mapToObj(i -> BASE + "/entity/register-" + i)
                    .toList();
        }
        return List.of(BASE + "/" + w + "/register");
    }

    private static void createIfMissing(ZooKeeper zk, String path, byte[] data) throws Exception {
        try {
            zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // there already
        }
    }

    private static String workloadOf(String holdDir) {
        return holdDir.substring(BASE.length() + 1, holdDir.indexOf('/', BASE.length() + 1));
    }

    private static int children(ZooKeeper zk, String dir) {
        try {
            CompletableFuture<Integer> n = new CompletableFuture<>();
            zk.getChildren(dir, false, (rc, path, ctx, names) -> n.complete(names != null ? names.size()
                    : rc == KeeperException.Code.NONODE.intValue() ? 0 : -1), null);
            return n.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            return -1;
        }
    }

    private static boolean everyWorkloadGranted(List<ClientProcess> clients, List<String> workloads, long since) {
        List<Path> files = new ArrayList<>();
        clients.forEach(c -> files.addAll(c.histories()));
        try {
            List<History.Event> events = History.read(files);
            for (String w : checked(workloads)) {
                // a cache workload: its writers write again (its caches are checked at the end)
                boolean granted = events.stream().anyMatch(e -> e.workload().equals(w) && e.time() > since
                        && (e.is("ok", "acquire") || e.is("event", "elected")
                                || (w.equals("counter") && e.is("ok", "write"))
                                || (isCache(w) && e.type().equals("ok"))));
                if (!granted) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the names the checker sees: {@code shards} stands for one workload per shard */
    static List<String> checked(List<String> workloads) {
        List<String> names = new ArrayList<>();
        for (String w : workloads) {
            if (w.equals("shards")) {
                names.addAll(ShardWorkload.names());
            } else {
                names.add(w);
            }
        }
        return names;
    }

    /**
     * Polls {@code condition} every 200 ms (it may read every history file) until it holds or
     * {@code within} has passed; @return whether it held
     */
    private static boolean awaitCondition(Duration within, BooleanSupplier condition) throws InterruptedException {
        return io.zkcoord.testing.Await.within(within, Duration.ofMillis(200), condition);
    }
}
