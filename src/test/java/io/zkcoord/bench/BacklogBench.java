package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Section {@code backlog}: one client starts {@link #BACKLOG} {@code acquireAsync()} on as many
 * fresh paths, and the same thread, just after, calls a plain {@code lock()} on another free path.
 * Prints, per round, the backlog's drain time (from the first call to the last
 * grant) and the {@code lock()}'s wait, and the wait as a share of the drain. Every round uses a
 * fresh client and fresh paths; the leases are released after the round is measured.
 */
final class BacklogBench {

    /** Acquisitions in the backlog; {@code -Dbench.backlog=N}. */
    static final int BACKLOG = Integer.getInteger("bench.backlog", 5_000);
    private static final int ROUNDS = 3;

    private final String connect;
    private final PrintStream out;
    private final PrintStream progress;
    /** The largest share of the drain a {@code lock()} waited, over the rounds. */
    double worstShare;

    BacklogBench(String connect, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.out = out;
        this.progress = progress;
    }

    void run() throws Exception {
        out.println();
        out.printf("B. Backlog: %,d acquireAsync() on fresh paths, then lock() on another free path (same thread)%n",
                BACKLOG);
        out.println("   round  drain of the backlog  lock() wait  wait / drain");
        String parent = "/backlog-" + System.nanoTime();
        for (int round = 0; round <= ROUNDS; round++) {
            progress.println("B. backlog round " + round + " ...");
            Result r = round(parent + "/" + round);
            if (round == 0) {
                continue; // warm-up
            }
            double share = (double) r.lockWaitNanos / r.drainNanos;
            worstShare = Math.max(worstShare, share);
            out.printf("   %5d  %17.0f ms  %8.1f ms  %11.1f %%%n", round, r.drainNanos / 1e6, r.lockWaitNanos / 1e6,
                    share * 100);
        }
    }

    private record Result(long drainNanos, long lockWaitNanos) {
    }

    private Result round(String parent) throws Exception {
        try (ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(40))
                .build()) {
            new ZkMutex(client, parent + "/warm").acquire().release(); // the parent exists, the session is up
            AtomicLong lastGrant = new AtomicLong();
            List<CompletableFuture<ZkLease>> backlog = new ArrayList<>(BACKLOG);
            long start = System.nanoTime();
            for (int i = 0; i < BACKLOG; i++) {
                CompletableFuture<ZkLease> f = new ZkMutex(client, parent + "/key-" + i).acquireAsync();
                f.thenRun(() -> lastGrant.accumulateAndGet(System.nanoTime(), Math::max));
                backlog.add(f);
            }
            ZkMutex free = new ZkMutex(client, parent + "/free");
            long asked = System.nanoTime();
            free.lock();
            long lockWait = System.nanoTime() - asked;
            free.unlock();
            CompletableFuture.allOf(backlog.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
            Result result = new Result(lastGrant.get() - start, lockWait);
            ExecutorService releasers = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> released = new ArrayList<>(BACKLOG);
                for (CompletableFuture<ZkLease> f : backlog) {
                    released.add(releasers.submit(() -> f.join().release()));
                }
                for (Future<?> r : released) {
                    r.get(5, TimeUnit.MINUTES);
                }
            } finally {
                releasers.shutdown();
            }
            return result;
        }
    }
}
