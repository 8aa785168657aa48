package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exactly once under connection cuts at random: clients add to one counter through the test
 * proxy while a nemesis cuts their connections, either right after a write reached the server
 * (before its reply) or at any moment (a request half sent, a read in flight). Every call's
 * outcome is recorded, and the history is checked by {@link CounterHistory}: the final value is
 * the acknowledged additions plus a subset of those that ended unknown. Once per run the
 * nemesis also holds a partition longer than the writers' sessions, so that some writes end
 * unknown ({@code CommitOutcomeUnknownException}) and the check has a subset to choose.
 *
 * <p>Every wait is bounded: each call must end (value or exception) within {@link #CALL_BOUND},
 * far beyond what the default retry policy allows, or the test fails naming it; and the nemesis
 * never waits for a cut no write claims (once the workers are done, an armed cut is disarmed),
 * since the proxy's cut completes only when a {@code multi} passes through it.
 */
class RandomCutsHistoryTest {

    private static final Logger log = LoggerFactory.getLogger(RandomCutsHistoryTest.class);

    /** How long one call may take at most: the default retry policy's bound with room for a busy machine. */
    private static final Duration CALL_BOUND = Duration.ofSeconds(120);
    /** The writers' session timeout: short, so that one partition in each run outlasts it. */
    private static final Duration SESSION = Duration.ofSeconds(4);

    @Test
    @Timeout(300)
    void randomCutsCountEachAdditionOnce() throws Exception {
        run(2, 3, 8, 10, System.nanoTime());
    }

    /** The longer run, for the soak profile. */
    @Test
    @Tag("soak")
    @Timeout(1800)
    void randomCutsSoak() throws Exception {
        for (int round = 0; round < 10; round++) {
            run(4, 3, 40, 60, System.nanoTime());
        }
    }

    /**
     * @param clients clients (sessions) writing through the proxy
     * @param threads threads per client, each calling in turn (a client runs its calls on one
     *     counter one at a time, so these queue behind each other)
     * @param callsEach calls per thread at least (each goes on while the nemesis cuts)
     * @param cuts cuts at most (one of them a partition outlasting the sessions)
     * @param seed the seed of every random choice, logged to replay a run
     */
    private static void run(int clients, int threads, int callsEach, int cuts, long seed) throws Exception {
        log.info("random cuts: {} clients x {} threads x {} calls, {} cuts, seed {}", clients, threads, callsEach, cuts,
                seed);
        Random random = new Random(seed);
        CounterHistory history = new CounterHistory();
        AtomicInteger nothingWritten = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        AtomicBoolean cutting = new AtomicBoolean(true);
        Set<Long> returned = ConcurrentHashMap.newKeySet();
        try (TestingServer server = new TestingServer(true);
             ZkProxy proxy = ZkProxy.to(server.getConnectString());
             ZkClient reader = ZkClient.builder().connectString(server.getConnectString()).build()) {
            String path = "/history/random";
            new ZkAtomicLong(reader, path).set(0);
            List<ZkClient> cs = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(clients * threads);
            try {
                List<CompletableFuture<Void>> workers = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    ZkClient c = ZkClient.builder().connectString(proxy.connectString())
                            .sessionTimeout(SESSION).build();
                    cs.add(c);
                    ZkAtomicLong counter = new ZkAtomicLong(c, path);
                    for (int t = 0; t < threads; t++) {
                        long workerSeed = random.nextLong();
                        workers.add(CompletableFuture.runAsync(() -> work(counter, callsEach, cutting, new Random(workerSeed),
                                history, nothingWritten, calls, returned), pool));
                    }
                }
                AtomicBoolean done = new AtomicBoolean();
                CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> done.set(true));
                int made;
                try {
                    made = cutAtRandom(proxy, cuts, random, done);
                } finally {
                    cutting.set(false);
                }
                for (CompletableFuture<Void> w : workers) {
                    try {
                        w.get(CALL_BOUND.toSeconds() * (callsEach + 4), TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        throw new AssertionError("seed " + seed + ": " + e.getCause(), e.getCause());
                    }
                }
                long end = new ZkAtomicLong(reader, path).get();
                // Every applied write is one step of the node's version (set(0) made it at version 0).
                int writes = reader.zooKeeper().exists(path, false).getVersion();
                log.info("random cuts, seed {}: {} cuts made, {} acknowledged, {} unknown, {} failed with nothing"
                        + " written, final {}, {} writes", seed, made, history.acknowledgedCount(), history.unknownCount(),
                        nothingWritten.get(), end, writes);
                assertNull(history.check(0, end), "seed " + seed);
                // Fewer writes than acknowledged additions: additions shared writes (and met the cuts).
                assertTrue(writes < history.acknowledgedCount(), "additions shared writes: " + writes + " writes for "
                        + history.acknowledgedCount() + " acknowledged additions");
                assertEquals(calls.get(), history.acknowledgedCount() + history.unknownCount() + nothingWritten.get(),
                        "every call ended");
                assertTrue(made > 0, "the nemesis cut at least once");
            } finally {
                pool.shutdownNow();
                cs.forEach(ZkClient::close);
            }
        }
    }

    /**
     * One worker's calls, each recorded with its outcome: at least {@code atLeast}, and on while the
     * nemesis is cutting (so that its cuts meet writes however fast the machine is). The calls go
     * in small windows (2 to 4 at once, then each awaited), so that a client's calls queue behind
     * its running one and share writes: combined writes meet the cuts too. A call that does not
     * end within the bound fails, and so does a value returned twice (every delta is positive, so
     * each applied addition leaves its own value).
     */
    private static void work(ZkAtomicLong counter, int atLeast, AtomicBoolean cutting, Random random,
            CounterHistory history, AtomicInteger nothingWritten, AtomicInteger calls, Set<Long> returned) {
        for (int n = 0; n < atLeast || cutting.get(); ) {
            int window = 2 + random.nextInt(3);
            long[] deltas = new long[window];
            List<CompletableFuture<Long>> sent = new ArrayList<>(window);
            for (int i = 0; i < window; i++, n++) {
                calls.incrementAndGet();
                deltas[i] = 1 + random.nextInt(9);
                sent.add(counter.addAndGetAsync(deltas[i]));
            }
            for (int i = 0; i < window; i++) {
                record(counter, deltas[i], sent.get(i), history, nothingWritten, returned);
            }
        }
    }

    private static void record(ZkAtomicLong counter, long delta, CompletableFuture<Long> call, CounterHistory history,
            AtomicInteger nothingWritten, Set<Long> returned) {
        try {
            long value = call.get(CALL_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            history.acknowledged(delta);
            if (!returned.add(value)) {
                fail("value " + value + " returned by two additions on " + counter);
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CommitOutcomeUnknownException) {
                history.unknown(delta);
            } else if (e.getCause() instanceof CoordinationException) {
                nothingWritten.incrementAndGet();
            } else {
                throw new AssertionError("unexpected failure of an addition: " + e.getCause(), e.getCause());
            }
        } catch (TimeoutException e) {
            fail("an addition of " + delta + " did not end within " + CALL_BOUND + " on " + counter);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /**
     * Cuts up to {@code cuts} times while the workers run: half right after a write reached the
     * server, half at a random moment. Returns how many cuts were made.
     */
    private static int cutAtRandom(ZkProxy proxy, int cuts, Random random, AtomicBoolean done) throws Exception {
        int made = 0;
        while (made < cuts && !done.get()) {
            Thread.sleep(20 + random.nextInt(150)); // the nemesis's pace, not a wait for a condition
            if (made == cuts / 2) {
                // Once per run, a partition outlasting the sessions: writes in flight end unknown.
                proxy.stall();
                Thread.sleep(SESSION.toMillis() + 2_000);
                proxy.heal();
            } else if (random.nextBoolean()) {
                CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
                // The workers may finish before another write: the cut is then disarmed, not awaited forever.
                while (!cut.isDone() && !done.get()) {
                    try {
                        cut.get(100, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException e) {
                        // look at done again
                    }
                }
                if (!cut.isDone()) {
                    proxy.disarmCut();
                    break;
                }
            } else {
                proxy.cutAll();
            }
            made++;
        }
        return made;
    }
}
