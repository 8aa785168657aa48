package io.zkcoord.bench;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Section {@code curator}: 8 clients (8 sessions), one thread each, looping lock/unlock on one
 * path, as four fleets in one run: all Curator {@code InterProcessMutex}; half Curator, half {@code
 * ZkMutex} with {@code Protocol.CURATOR} (the mixed fleet of a rolling migration); all zkcoord with
 * {@code CURATOR}; all zkcoord with {@code ZKCOORD}. Prints handoffs per second (a cycle whose
 * holder is not the previous one) and requests per handoff (the server's {@code
 * zk_packets_received} over the window, less the meter's own), and checks no overlap.
 */
final class CuratorMixBench {

    private static final int CLIENTS = 8;
    private static final long WARMUP_MILLIS = 1_000;
    private static final long WINDOW_MILLIS = 5_000;

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;

    CuratorMixBench(String connect, ServerCounters counters, PrintStream out) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
    }

    /** A party's lock and unlock. */
    private interface Party {
        void lock() throws Exception;

        void unlock() throws Exception;
    }

    void run() throws Exception {
        out.println();
        out.println("C. mixed fleets with Curator: " + CLIENTS + " clients (" + CLIENTS + " sessions), 1 thread each, one path; "
                + WINDOW_MILLIS + " ms window after " + WARMUP_MILLIS + " ms warm-up");
        out.printf("   %-44s %9s %11s %17s %8s%n", "", "cycles/s", "handoffs/s", "requests/handoff", "overlap");
        fleet("all Curator InterProcessMutex", CLIENTS, 0, Protocol.CURATOR);
        fleet("4 Curator + 4 ZkMutex(CURATOR)", CLIENTS / 2, CLIENTS / 2, Protocol.CURATOR);
        fleet("all ZkMutex(CURATOR)", 0, CLIENTS, Protocol.CURATOR);
        fleet("all ZkMutex(ZKCOORD)", 0, CLIENTS, Protocol.ZKCOORD);
    }

    private void fleet(String label, int curators, int ours, Protocol protocol) throws Exception {
        String path = "/bench/curator-mix-" + label.replaceAll("[^A-Za-z0-9]+", "-");
        List<AutoCloseable> open = new ArrayList<>();
        List<Party> parties = new ArrayList<>();
        try {
            for (int i = 0; i < curators; i++) {
                CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 10_000, 5_000,
                        new ExponentialBackoffRetry(20, 10, 500));
                c.start();
                open.add(c);
                c.blockUntilConnected(30, TimeUnit.SECONDS);
                InterProcessMutex m = new InterProcessMutex(c, path);
                parties.add(new Party() {
                    public void lock() throws Exception {
                        m.acquire();
                    }

                    public void unlock() throws Exception {
                        m.release();
                    }
                });
            }
            for (int i = 0; i < ours; i++) {
                ZkClient z = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build();
                open.add(z);
                ZkMutex m = new ZkMutex(z, path, protocol);
                parties.add(new Party() {
                    public void lock() {
                        m.lock();
                    }

                    public void unlock() {
                        m.unlock();
                    }
                });
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean counting = new AtomicBoolean();
            AtomicLong cycles = new AtomicLong();
            AtomicLong handoffs = new AtomicLong();
            AtomicInteger inside = new AtomicInteger();
            AtomicLong overlaps = new AtomicLong();
            AtomicInteger last = new AtomicInteger(-1);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < parties.size(); i++) {
                Party p = parties.get(i);
                int id = i;
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            p.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                int previous = last.getAndSet(id);
                                if (counting.get()) {
                                    cycles.incrementAndGet();
                                    if (previous != id) {
                                        handoffs.incrementAndGet();
                                    }
                                }
                                inside.decrementAndGet();
                            } finally {
                                p.unlock();
                            }
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, "mix-" + i);
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
            long requests = counters.requests(before, after);
            out.printf("   %-44s %9.0f %11.0f %17.2f %8d%n", label, cycles.get() / seconds, handoffs.get() / seconds,
                    handoffs.get() == 0 ? Double.NaN : (double) requests / handoffs.get(), overlaps.get());
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
        }
    }
}
