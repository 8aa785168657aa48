package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.value.ZkAtomicLong;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

/**
 * Section {@code counter}: {@link ZkAtomicLong} against Curator's {@code DistributedAtomicLong}
 * (optimistic, no promotion to a lock) in the same run, on one counter: 1 client, then 8 clients
 * (8 sessions, one thread each), then 8 clients of 8 threads each (a service's request threads
 * sharing its one client), incrementing as fast as they can. Prints increments per second
 * and, from the server's counters over the window, requests, writes (a refused conditional write
 * counts: it goes through the log too) and reads per increment. Curator's increment returns
 * {@code succeeded() == false} when its retry policy gives up on contention (nothing written): its
 * callers loop, so this one does, and counts only increments that succeeded. Each fleet checks
 * that the counter's final value is the number of increments acknowledged (none lost).
 *
 * <p>Curator is run with two retry policies: {@code ExponentialBackoffRetry(1000, 3)}, the policy
 * of Curator's own examples (its "default"), and {@code RetryNTimes(1000, 0)}, which retries at
 * once: its best case under contention.
 */
final class CounterBench {

    private static final long WARMUP_MILLIS = 1_000;
    private static final long WINDOW_MILLIS = 5_000;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;

    /** Per fleet shape with 8 clients (1 and 8 threads each): the figures for the target. */
    private final List<String> targets = new ArrayList<>();

    CounterBench(String connect, ServerCounters counters, PrintStream out) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
    }

    /** One client's increment; returns false if it did not succeed (nothing written). */
    private interface Incrementer {
        boolean increment() throws Exception;
    }

    private record Result(double perSecond, double requests, double writes, double reads, long refused, boolean exact) {
    }

    void run() throws Exception {
        out.println();
        out.println("V. one counter: ZkAtomicLong against Curator's DistributedAtomicLong (optimistic, no promotion);"
                + " each client its own session, its threads sharing it; " + WINDOW_MILLIS + " ms window after "
                + WARMUP_MILLIS + " ms warm-up");
        out.printf("   %-48s %7s %7s %12s %13s %11s %10s %17s %6s%n", "", "clients", "threads", "increments/s",
                "requests/inc", "writes/inc", "reads/inc", "not succeeded/s", "exact");
        for (int[] shape : new int[][] {{1, 1}, {8, 1}, {8, 8}}) {
            int clients = shape[0];
            int threads = shape[1];
            Result ours = fleet("ZkAtomicLong", clients, threads, null);
            Result curatorDefault = fleet("DistributedAtomicLong, ExponentialBackoffRetry(1000,3)", clients, threads,
                    new ExponentialBackoffRetry(1000, 3));
            Result curatorBest = fleet("DistributedAtomicLong, RetryNTimes(1000,0)", clients, threads,
                    new RetryNTimes(1000, 0));
            if (clients == 8) {
                targets.add(String.format("counter, 8 clients x %d thread(s): ZkAtomicLong/DistributedAtomicLong"
                        + " increments/s %.2f with Curator's example retry (target >= 2), %.2f against its"
                        + " retry-at-once; %.2f vs %.2f requests per increment: %s", threads,
                        ours.perSecond() / curatorDefault.perSecond(), ours.perSecond() / curatorBest.perSecond(),
                        ours.requests(), curatorDefault.requests(),
                        ours.perSecond() >= 2 * curatorDefault.perSecond() ? "met" : "NOT MET"));
            }
        }
    }

    void printTargets(PrintStream to) {
        targets.forEach(line -> to.println("   " + line));
    }

    private Result fleet(String label, int clients, int threadsEach, RetryPolicy curatorRetry) throws Exception {
        String path = "/bench/counter-" + clients + "x" + threadsEach + "-" + label.replaceAll("[^A-Za-z0-9]+", "-");
        List<AutoCloseable> open = new ArrayList<>();
        List<Incrementer> parties = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                if (curatorRetry == null) {
                    ZkClient z = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build();
                    open.add(z);
                    ZkAtomicLong counter = new ZkAtomicLong(z, path);
                    for (int t = 0; t < threadsEach; t++) {
                        parties.add(() -> {
                            counter.incrementAndGet();
                            return true;
                        });
                    }
                } else {
                    CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 10_000, 5_000,
                            new ExponentialBackoffRetry(1000, 3));
                    c.start();
                    open.add(c);
                    c.blockUntilConnected(30, TimeUnit.SECONDS);
                    DistributedAtomicLong counter = new DistributedAtomicLong(c, path, curatorRetry);
                    for (int t = 0; t < threadsEach; t++) {
                        parties.add(() -> {
                            AtomicValue<Long> v = counter.increment();
                            return v.succeeded();
                        });
                    }
                }
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean counting = new AtomicBoolean();
            AtomicLong done = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            AtomicLong total = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < parties.size(); i++) {
                Incrementer p = parties.get(i);
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            boolean ok = p.increment();
                            if (ok) {
                                total.incrementAndGet();
                            }
                            if (counting.get()) {
                                if (ok) {
                                    done.incrementAndGet();
                                } else {
                                    refused.incrementAndGet();
                                }
                            }
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, "counter-" + i);
                threads.add(t);
                t.start();
            }
            TimeUnit.MILLISECONDS.sleep(WARMUP_MILLIS); // a benchmark's warm-up, not a test's wait
            ServerCounters.Snapshot before = counters.snap();
            counting.set(true);
            long start = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(WINDOW_MILLIS);
            counting.set(false);
            double seconds = (System.nanoTime() - start) / 1e9;
            ServerCounters.Snapshot after = counters.snap();
            stop.set(true);
            for (Thread t : threads) {
                t.join(60_000);
            }
            long n = done.get();
            long requests = counters.requests(before, after);
            long writes = after.writes() - before.writes();
            long reads = after.reads() - before.reads();
            ZkClient check = ZkClient.builder().connectString(connect).build();
            open.add(check);
            boolean exact = new ZkAtomicLong(check, path).get() == total.get();
            Result r = new Result(n / seconds, (double) requests / n, (double) writes / n, (double) reads / n,
                    Math.round(refused.get() / seconds), exact);
            out.printf("   %-48s %7d %7d %12.0f %13.2f %11.2f %10.2f %17d %6s%n", label, clients, threadsEach,
                    r.perSecond(), r.requests(),
                    r.writes(), r.reads(), r.refused(), exact ? "yes" : "NO");
            return r;
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
        }
    }
}
