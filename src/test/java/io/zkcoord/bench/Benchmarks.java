package io.zkcoord.bench;

import io.zkcoord.testing.FourLetterWords;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * The benchmark: starts its own in-process ZooKeeper server and prints, in one run, the numbers
 * quoted in {@code docs/herd-effect.md}. Not a test; run it with
 *
 * <pre>mvn -B -q -Pbench test-compile exec:java</pre>
 *
 * <ol>
 *   <li>Uncontended {@code lock()}+{@code unlock()} next to two raw protocol floors (sequential,
 *       and create+getChildren pipelined in one round trip).
 *   <li>8 clients on one {@code ZkMutex}: handoffs per second and handoff latency.
 *   <li>8 clients on one {@code ZkReadWriteLock}, 90 % reads.
 *   <li>16 threads sharing one {@code ZkMutex} on one client: requests per cycle.
 *   <li>The herd table: what one release costs the server at queue lengths 1 to 1000.
 *   <li>Only when named ({@code pending}): 10,000 pending {@code acquireAsync()} on one client,
 *       their threads and heap, and how fast they are granted in turn.
 *   <li>The semaphore ({@code semaphore}): what one release and one holder's session expiry cost
 *       the server with 10 to 1000 waiters behind 1 to 50 holders; uncontended acquire+release.
 *   <li>One counter ({@code counter}): {@code ZkAtomicLong} against Curator's {@code
 *       DistributedAtomicLong}, 1 and 8 clients: increments per second, requests per increment.
 *   <li>Only when named ({@code backlog}): 5,000 {@code acquireAsync()} on fresh paths and a
 *       {@code lock()} on another path just after: the backlog's drain time and the lock's wait.
 *   <li>First handoffs on a fresh key ({@code handoff}): herd_mutex and election_handoff, 20
 *       waiters, the writes, reads and notifications of each of the first 5 handoffs.
 *   <li>Shards ({@code shards}): what a join, a leave and a death cost the ensemble, and the time
 *       until the shards are balanced again, at 10 to 1,000 shards over 3 and 10 members.
 * </ol>
 * Results go to standard output, progress to standard error. Arguments may name a subset of the
 * sections: {@code uncontended mutex rw threads herd pending semaphore multi shards entity dircount
 * steady duplicate backlog handoff cache curator counter} (all but {@code pending}, {@code backlog} and {@code curator} by
 * default; {@code curator}: 8 clients on one path as all-Curator, half Curator and half {@code
 * ZkMutex(CURATOR)}, all {@code CURATOR}, all {@code ZKCOORD}: handoffs per second, requests per
 * handoff). {@code entity}: a lock
 * per entity (a new key every cycle)
 * against its raw floor; {@code dircount}: 50,000 distinct keys, the server's znode count during
 * and after; {@code steady}: k clients looping on one path the library made, writes per cycle in the
 * first contention episode and after it; {@code duplicate}: 2 clients racing on each of many fresh
 * keys, requests per key and directories left.
 *
 * <p>System properties: {@code -Dbench.forceSync=no} starts the server with {@code
 * zookeeper.forceSync=no} (writes are not fsynced), to see the protocol without the disk;
 * {@code -Dbench.pending=N} changes the number of pending acquisitions (10,000);
 * {@code -Dbench.uncontendedWarmup=CYCLES} the cycles of each loop the {@code uncontended} section
 * runs before it measures (15,000, at most 90 s: until the JIT has compiled the library's code);
 * {@code -Dbench.entityWarmup=CYCLES} the same for the {@code entity} section;
 * {@code -Dbench.entityKeys=N} the keys of the {@code dircount} section (50,000);
 * {@code -Dbench.backlog=N} the acquisitions of the {@code backlog} section (5,000).
 */
public final class Benchmarks {

    private Benchmarks() {
    }

    /** Every section, in order; the arguments may name a subset, e.g. {@code -Dexec.args="uncontended herd"}. */
    private static final List<String> SECTIONS = List.of("uncontended", "mutex", "rw", "threads", "herd", "pending",
            "semaphore", "multi", "shards", "entity", "dircount", "steady", "duplicate", "backlog", "handoff",
            "cache", "curator", "counter");
    /** What runs without arguments: "pending" takes minutes, and runs only when named. */
    private static final List<String> DEFAULT_SECTIONS = List.of("uncontended", "mutex", "rw", "threads", "herd",
            "semaphore", "multi", "shards", "entity", "dircount", "steady", "duplicate", "handoff", "cache", "counter");
    /** {@code -Dbench.forceSync=no}: the server does not fsync its transaction log. */
    static final String FORCE_SYNC_PROPERTY = "bench.forceSync";

    public static void main(String[] args) throws Exception {
        List<String> sections = args.length == 0 ? DEFAULT_SECTIONS : List.of(args);
        if (!SECTIONS.containsAll(sections)) {
            throw new IllegalArgumentException("sections are " + SECTIONS + "; got " + sections);
        }
        // Four-letter commands must be whitelisted before the server starts: mntr is our meter.
        System.setProperty(FourLetterWords.WHITELIST_PROPERTY, "*");
        // Read by each FileTxnLog as it is made: must be set before the server starts.
        if ("no".equalsIgnoreCase(System.getProperty(FORCE_SYNC_PROPERTY, "yes"))) {
            System.setProperty("zookeeper.forceSync", "no");
        }
        boolean fsync = !"no".equals(System.getProperty("zookeeper.forceSync", "yes"));
        PrintStream out = System.out;
        PrintStream progress = System.err;
        long start = System.nanoTime();
        out.println("zkcoord benchmarks (mvn -B -q -Pbench test-compile exec:java), sections " + sections);
        out.printf("machine: %d processors (JVM view), %s; Java %s (%s %s)%n", Runtime.getRuntime().availableProcessors(),
                cpuModel(), System.getProperty("java.version"), System.getProperty("java.vm.name"),
                System.getProperty("java.vm.version"));
        out.printf("load average at start: %s%n", loadAverage());
        // tickTime 2 s allows 40 s sessions; maxClientCnxns 0: no limit (the herd table opens 101 clients).
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 2000, 0);
        try (TestingServer server = new TestingServer(spec, true)) {
            String connect = server.getConnectString();
            out.printf("server: ZooKeeper %s, in-process TestingServer at %s, standalone, data dir on %s%n",
                    org.apache.zookeeper.Version.getFullVersion().split(",")[0], connect,
                    fileSystemOf(server.getTempDirectory()));
            out.printf("fsync: %s%n", fsync ? "on (every write is fsynced to the transaction log; -D" + FORCE_SYNC_PROPERTY
                    + "=no turns it off)" : "OFF (zookeeper.forceSync=no: writes are not fsynced; not a production setting)");
            ServerCounters counters = new ServerCounters(FourLetterWords.of(connect));
            long perMntr = counters.calibrate();
            out.printf("meter: mntr; one mntr call adds %d to zk_packets_received (subtracted below)%n", perMntr);

            ThroughputBench throughput = new ThroughputBench(connect, counters, out);
            if (sections.contains("uncontended")) {
                progress.println("1. uncontended ...");
                throughput.uncontended();
            }
            if (sections.contains("mutex")) {
                progress.println("2. 8 clients, one mutex ...");
                throughput.eightClientsOneMutex();
            }
            if (sections.contains("rw")) {
                progress.println("3. 8 clients, read/write 90/10 ...");
                throughput.eightClientsReadWrite();
            }
            if (sections.contains("threads")) {
                progress.println("4. 16 threads, one client ...");
                throughput.sixteenThreadsOneClient();
            }
            HerdBench herd = new HerdBench(connect, counters, out, progress);
            if (sections.contains("herd")) {
                herd.run();
            }
            PendingBench pending = new PendingBench(connect, counters, out, progress);
            if (sections.contains("pending")) {
                progress.println("6. pending acquireAsync() ...");
                pending.run();
            }
            SemaphoreBench semaphore = new SemaphoreBench(connect, counters, out, progress);
            if (sections.contains("semaphore")) {
                progress.println("7. semaphore ...");
                semaphore.run();
            }
            MultiLockBench multiLock = new MultiLockBench(connect, counters, out, progress);
            if (sections.contains("multi")) {
                multiLock.run();
            }
            if (sections.contains("shards")) {
                new ShardBench(connect, counters, out, progress).run();
            }
            EntityBench entity = new EntityBench(connect, counters, out, progress);
            if (sections.contains("entity")) {
                progress.println("E. a lock per entity ...");
                entity.perEntity();
            }
            if (sections.contains("dircount")) {
                progress.println("D. directory count ...");
                entity.directoryCount();
            }
            ContentionBench steady = new ContentionBench(connect, counters, out);
            if (sections.contains("steady")) {
                progress.println("S. steady contention across sessions ...");
                steady.run();
            }
            HandoffBench handoff = new HandoffBench(connect, out, progress);
            if (sections.contains("handoff")) {
                handoff.run();
            }
            BacklogBench backlog = new BacklogBench(connect, out, progress);
            if (sections.contains("backlog")) {
                backlog.run();
            }
            if (sections.contains("curator")) {
                progress.println("C. mixed fleets with Curator ...");
                new CuratorMixBench(connect, counters, out).run();
            }
            if (sections.contains("duplicate")) {
                progress.println("S2. duplicate requests on fresh keys ...");
                steady.duplicates();
            }
            CacheBench cache = new CacheBench(connect, counters, out, progress);
            if (sections.contains("cache")) {
                cache.run();
            }
            CounterBench counter = new CounterBench(connect, counters, out);
            if (sections.contains("counter")) {
                progress.println("V. one counter against Curator's DistributedAtomicLong ...");
                counter.run();
            }
            out.println();
            out.println("Targets (requests per cycle allow 1 % for the cycles cut by a window's edges)");
            if (sections.contains("uncontended")) {
                out.printf("   uncontended: ZkMutex/1-RTT floor cycles/s %.3f (target >= 0.95), acquire p50 %.3f (target <= 1.1),"
                        + " %.2f requests per cycle (target 3): %s%n", throughput.uncontendedThroughputRatio,
                        throughput.uncontendedAcquireRatio, throughput.uncontendedRequests,
                        throughput.uncontendedThroughputRatio >= 0.95 && throughput.uncontendedAcquireRatio <= 1.1
                                && throughput.uncontendedRequests < 3.03 ? "met" : "NOT MET");
            }
            if (sections.contains("threads")) {
                out.printf("   16 threads on one ZkMutex: %.2f requests per cycle (target <= 5): %s%n",
                        throughput.sixteenThreadsRequests, throughput.sixteenThreadsRequests <= 5.05 ? "met" : "NOT MET");
            }
            if (sections.contains("herd")) {
                herd.printTargets(out);
            }
            if (sections.contains("pending")) {
                pending.printTargets(out);
            }
            if (sections.contains("semaphore")) {
                semaphore.printTargets(out);
            }
            if (sections.contains("entity")) {
                out.printf("   per entity: ZkMutex/floor cycles/s %.3f (target >= 0.9), %.2f requests per cycle (target <= 3.2),"
                        + " %d directories left (target 0): %s%n", entity.throughputRatio, entity.requestsPerCycle,
                        entity.directoriesLeft, entity.throughputRatio >= 0.9 && entity.requestsPerCycle <= 3.2
                                && entity.directoriesLeft == 0 ? "met" : "NOT MET");
            }
            if (sections.contains("dircount")) {
                out.printf("   directory count: grew by at most %d znodes during and after (target: a few): %s%n",
                        entity.znodeGrowth, entity.znodeGrowth <= 10 ? "met" : "NOT MET");
            }
            if (sections.contains("steady")) {
                out.printf("   steady contention across sessions: at most %.2f writes per cycle after the first episode"
                        + " (target 2: create and delete, no refused removal): %s%n", steady.steadyWritesPerCycle,
                        steady.steadyWritesPerCycle <= 2.02 ? "met" : "NOT MET");
            }
            if (sections.contains("cache")) {
                cache.printTargets(out);
            }
            if (sections.contains("counter")) {
                counter.printTargets(out);
            }
            if (sections.contains("duplicate")) {
                out.printf("   duplicate requests on fresh keys: %d directories left (target 0): %s%n",
                        steady.duplicateDirectoriesLeft, steady.duplicateDirectoriesLeft == 0 ? "met" : "NOT MET");
            }
            if (sections.contains("handoff")) {
                out.printf("   first handoffs on a fresh key: at most %d writes per handoff (target 1): %s%n",
                        handoff.mostWrites, handoff.mostWrites <= 1 ? "met" : "NOT MET");
            }
            if (sections.contains("backlog")) {
                out.printf("   backlog: a lock() on a free path waited at most %.1f %% of the backlog's drain"
                        + " (target <= 10 %%): %s%n",
                        backlog.worstShare * 100, backlog.worstShare <= 0.10 ? "met" : "NOT MET");
            }
            if (sections.contains("multi")) {
                out.printf("   multi-lock: %.2f requests per uncontended cycle, 2 and 4 paths (target 3): %s%n",
                        multiLock.uncontendedRequests, multiLock.uncontendedRequests < 3.03 ? "met" : "NOT MET");
            }
        }
        out.println();
        out.printf("load average at end: %s; total %.0f s%n", loadAverage(), (System.nanoTime() - start) / 1e9);
        out.flush();
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2] + " (1, 5, 15 min)";
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String fileSystemOf(File dir) {
        try {
            return Files.getFileStore(dir.toPath()).type() + " (" + dir + ")";
        } catch (IOException e) {
            return dir.toString();
        }
    }
}
