package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Section "multi": {@link ZkMultiLock} against the usual way of locking several paths, one
 * {@link ZkMutex} after the other in a sorted order (sorted, or it could deadlock).
 * <ol>
 *   <li>Uncontended, one thread, 2 and 4 paths: cycles/s, acquire p50, requests per cycle.
 *   <li>Contended: 6 clients, 4 paths, each cycle takes a random 2 of them: cycles/s, requests
 *       per cycle.
 * </ol>
 */
final class MultiLockBench {

    private static final long UNCONTENDED_NANOS = TimeUnit.SECONDS.toNanos(8);
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(8);
    private static final int REQUEST_COUNT_CYCLES = 200;
    private static final int CONTENDING_CLIENTS = 6;
    private static final int CONTENDED_PATHS = 4;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    private final PrintStream progress;
    /** The multi-lock's request count per uncontended cycle, for the targets line (largest of the sizes). */
    double uncontendedRequests;

    MultiLockBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
        this.progress = progress;
    }

    /** Takes and releases the paths: the multi-lock, or the sorted mutexes. */
    private interface Way {
        /** @return nanoseconds the acquiring part took */
        long cycle(List<String> paths) throws Exception;
    }

    void run() throws Exception {
        out.println();
        out.println("8. Several paths at once: ZkMultiLock (one multi to enqueue in every queue) against one ZkMutex after");
        out.println("   the other in sorted order (the deadlock-free way without a multi-lock). Requests per cycle from "
                + REQUEST_COUNT_CYCLES + " cycles alone (mntr).");
        out.printf("   %-44s %9s %10s %12s%n", "uncontended, one thread", "cycles/s", "acq p50", "requests/cyc");
        try (ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build()) {
            for (int n : new int[] {2, 4}) {
                List<String> paths = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    paths.add("/bench/multi" + n + "/p" + i);
                }
                Way multi = ps -> {
                    ZkMultiLock lock = new ZkMultiLock(client, ps);
                    long t0 = System.nanoTime();
                    lock.lock();
                    long acquired = System.nanoTime() - t0;
                    lock.unlock();
                    return acquired;
                };
                Way sorted = ps -> sequentialCycle(client, ps);
                progress.println("8. multi-lock, uncontended, " + n + " paths ...");
                double multiRequests = uncontended("ZkMultiLock, " + n + " paths", multi, paths);
                uncontended(n + " ZkMutex one after the other", sorted, paths);
                uncontendedRequests = Math.max(uncontendedRequests, multiRequests);
            }
        }
        out.printf("   %-44s %9s %12s %14s%n", "contended: " + CONTENDING_CLIENTS + " clients, random 2 of "
                + CONTENDED_PATHS + " paths", "cycles/s", "requests/cyc", "notifications/cyc");
        progress.println("8. multi-lock, contended ...");
        contended("ZkMultiLock", true);
        contended("2 ZkMutex one after the other (sorted)", false);
    }

    private static long sequentialCycle(ZkClient client, List<String> paths) {
        List<String> order = new ArrayList<>(paths);
        Collections.sort(order);
        List<ZkLock> held = new ArrayList<>();
        long t0 = System.nanoTime();
        for (String p : order) {
            ZkMutex m = new ZkMutex(client, p);
            m.lock();
            held.add(m);
        }
        long acquired = System.nanoTime() - t0;
        for (int i = held.size() - 1; i >= 0; i--) {
            held.get(i).unlock();
        }
        return acquired;
    }

    /** @return requests per cycle */
    private double uncontended(String label, Way way, List<String> paths) throws Exception {
        long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < warmEnd) {
            way.cycle(paths);
        }
        Samples acquire = new Samples();
        long cycles = 0;
        long start = System.nanoTime();
        long end = start + UNCONTENDED_NANOS;
        while (System.nanoTime() < end) {
            acquire.add(way.cycle(paths));
            cycles++;
        }
        double perSecond = cycles / ((System.nanoTime() - start) / 1e9);
        ServerCounters.Snapshot before = counters.snap();
        for (int i = 0; i < REQUEST_COUNT_CYCLES; i++) {
            way.cycle(paths);
        }
        ServerCounters.Snapshot after = counters.snap();
        double requests = (double) counters.requests(before, after) / REQUEST_COUNT_CYCLES;
        out.printf("   %-44s %9.0f %10.3f %12.2f%n", label, perSecond, acquire.percentileMillis(50), requests);
        return requests;
    }

    private void contended(String label, boolean multi) throws Exception {
        List<ZkClient> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicLong cycles = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // Phases: 0 warm-up, 1 measure, 2 stop.
        java.util.concurrent.atomic.AtomicInteger phase = new java.util.concurrent.atomic.AtomicInteger();
        try {
            for (int c = 0; c < CONTENDING_CLIENTS; c++) {
                ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build();
                clients.add(client);
                Random random = new Random(c);
                Thread t = new Thread(() -> {
                    try {
                        while (phase.get() < 2) {
                            List<String> all = new ArrayList<>();
                            for (int i = 0; i < CONTENDED_PATHS; i++) {
                                all.add("/bench/multi-contended/p" + i);
                            }
                            Collections.shuffle(all, random);
                            List<String> two = all.subList(0, 2);
                            if (multi) {
                                ZkMultiLock lock = new ZkMultiLock(client, two);
                                lock.lock();
                                lock.unlock();
                            } else {
                                sequentialCycle(client, two);
                            }
                            if (phase.get() == 1) {
                                cycles.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "multi-bench-" + c);
                threads.add(t);
                t.start();
            }
            TimeUnit.SECONDS.sleep(1);
            ServerCounters.Snapshot before = counters.snap();
            long start = System.nanoTime();
            phase.set(1);
            TimeUnit.NANOSECONDS.sleep(CONTENDED_NANOS);
            phase.set(2);
            long nanos = System.nanoTime() - start;
            ServerCounters.Snapshot after = counters.snap();
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
            if (failure.get() != null) {
                throw new IllegalStateException("contended " + label + " failed", failure.get());
            }
            long n = cycles.get();
            out.printf("   %-44s %9.0f %12.2f %14.2f%n", label, n / (nanos / 1e9),
                    (double) counters.requests(before, after) / Math.max(1, n),
                    (double) ServerCounters.watchesFired(before, after) / Math.max(1, n));
        } finally {
            ThroughputBench.closeAll(clients);
        }
    }
}
