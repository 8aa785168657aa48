package io.zkcoord.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.cache.ZooKeeper39;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The short randomized nemesis run of the default build: a 3-server ensemble, 3 client processes each running
 * every workload (a cache following writers among them), every kind of fault for {@code nemesis.seconds} (default
 * 45) seconds, then the final heal and the checks. Prints the seed and the table; give the seed back with {@code -Dnemesis.seed=...} to replay the
 * schedule. The long runs are {@link NemesisSoakTest}.
 */
class NemesisTest {

    /**
     * The client sessions. A client served by a follower that is cut off from the leader is told (Disconnected)
     * only when that follower gives up on the leader, {@code syncLimit x tickTime} (4 x 200 ms) after the cut;
     * the leader may expire the session as early as a third of the timeout after the cut (the client may have
     * been silent for two thirds before it). So the sessions must exceed three times 800 ms, with margin: the
     * long run with {@code syncLimit=10} (2 s) and 3 s sessions found exactly that overlap (docs/nemesis.md).
     */
    static final Duration SESSION = Duration.ofSeconds(4);

    /** Every recipe the toolkit has (the cache only on a ZooKeeper 3.9 client: ZkCache refuses to run on 3.8). */
    static final List<String> WORKLOADS = Stream.of("mutex", "rwlock", "semaphore", "guarded", "election", "multi",
            "shards", "entity", "counter", "cache").filter(w -> !w.equals("cache") || ZooKeeper39.onClassPath())
            .toList();

    @Test
    @Timeout(value = 4, unit = java.util.concurrent.TimeUnit.MINUTES)
    void randomizedFaultsAgainstEveryRecipeBreakNoInvariant() throws Exception {
        NemesisRun.Config config = new NemesisRun.Config(3, 3, WORKLOADS, Faults.Kind.randomized(),
                Duration.ofSeconds(Long.getLong("nemesis.seconds", 45)), seed(), SESSION,
                outDir());
        NemesisRun.Outcome outcome = NemesisRun.run(config);
        System.out.println(outcome.table());
        assertEquals(List.of(), outcome.result().violations(), outcome.table());
        for (String w : NemesisRun.checked(WORKLOADS)) {
            Checker.Stats s = outcome.result().stats().get(w);
            if (NemesisRun.isCache(w)) {
                assertTrue(s != null && s.valuesShown > 0 && s.cachesCompared > 0, w + " showed nothing or was never"
                        + " compared with the tree: " + outcome.table());
                continue;
            }
            assertTrue(s != null && (w.equals("counter") ? s.writesAccepted > 0 : s.grants > 0),
                    w + " was never granted: " + outcome.table());
        }
        Map<String, long[]> faults = outcome.result().faults();
        assertTrue(faults.size() >= 4, "too few kinds of fault were injected: " + outcome.table());
    }

    static long seed() {
        Long given = Long.getLong("nemesis.seed");
        return given != null ? given : System.nanoTime() & 0xffffffffL;
    }

    static Path outDir() {
        return Path.of(System.getProperty("nemesis.dir", "target/nemesis"));
    }
}
