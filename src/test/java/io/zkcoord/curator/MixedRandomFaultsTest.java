package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Curator's {@code InterProcessMutex} and {@code ZkMutex(CURATOR)} contend on one path over many
 * cycles while a seeded random schedule cuts connections and ends sessions on the server ({@link
 * RandomFaultRun}); {@link FaultLedger} judges every overlap and keeps Curator's known faults apart
 * from ours. Nothing may be counted against us.
 *
 * <p>The seed is printed with the run's figures; {@code -Dmixed.faults.seed=S} replays the same
 * schedule of faults (which entry, which kind, which party). {@code -Dmixed.faults.cycles=N}
 * changes the length of the soak run.
 */
class MixedRandomFaultsTest {

    /** A short run for every build: seconds, a few faults. */
    @Test
    void randomCutsAndExpiriesShortRun() throws Exception {
        check(run(200, 10, 30));
    }

    /** Soak: thousands of cycles, about one fault every 10 to 30 entries. */
    @Tag("soak")
    @Test
    void randomCutsAndExpiriesSoak() throws Exception {
        check(run(Integer.getInteger("mixed.faults.cycles", 3_000), 10, 30));
    }

    private static RandomFaultRun.Outcome run(int cycles, int minGap, int maxGap) throws Exception {
        Long given = Long.getLong("mixed.faults.seed");
        long seed = given != null ? given : System.nanoTime() & 0xffffffffL;
        System.out.println("mixed random faults: seed=" + seed + " (replay with -Dmixed.faults.seed=" + seed + ")");
        String dir = "/mixed/random-faults";
        try (TestingServer server = new TestingServer(true); Fleet fleet = new Fleet(server.getConnectString())) {
            RandomFaultRun.Outcome outcome = new RandomFaultRun(server.getConnectString(), dir, seed, cycles, minGap,
                    maxGap, fleet).run();
            System.out.println(outcome.summary());
            outcome.curators().forEach(f -> System.out.println("  Curator's fault: " + f));
            ZooKeeper look = fleet.zkcoord().zooKeeper();
            Await.until(Duration.ofSeconds(60), () -> queue(look, dir) == 0,
                    () -> "nodes left behind after the run; " + outcome.summary());
            return outcome;
        } catch (Exception | AssertionError e) {
            throw new AssertionError("run failed; replay with -Dmixed.faults.seed=" + seed + ": " + e, e);
        }
    }

    private static void check(RandomFaultRun.Outcome outcome) {
        assertEquals(List.of(), outcome.ours(), outcome.summary());
        assertTrue(outcome.entries() > 0 && outcome.cuts() + outcome.expiries() > 0,
                "no fault was injected: " + outcome.summary());
    }

    private static int queue(ZooKeeper zk, String dir) {
        try {
            return zk.exists(dir, false) == null ? 0 : zk.getChildren(dir, false).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
