package io.zkcoord.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The long nemesis run (tag {@code nemesis}, never in the default build): by default a 5-server ensemble, 5
 * client processes running every workload, every kind of fault for {@code nemesis.minutes} (default 20) minutes:
 * <pre>
 * mvn -B verify -Psoak -Dgroups=nemesis -Dnemesis.minutes=20
 * </pre>
 * {@code -Dnemesis.servers=3}, {@code -Dnemesis.clients=N} and {@code -Dnemesis.seed=S} change the set-up.
 */
@Tag("nemesis")
class NemesisSoakTest {

    @Test
    @Timeout(value = 24, unit = java.util.concurrent.TimeUnit.HOURS)
    void longRandomizedRunBreaksNoInvariant() throws Exception {
        NemesisRun.Config config = new NemesisRun.Config(Integer.getInteger("nemesis.servers", 5),
                Integer.getInteger("nemesis.clients", 5), NemesisTest.WORKLOADS, Faults.Kind.randomized(),
                Duration.ofSeconds((long) (60 * Double.parseDouble(System.getProperty("nemesis.minutes", "20")))),
                NemesisTest.seed(), NemesisTest.SESSION, NemesisTest.outDir());
        NemesisRun.Outcome outcome = NemesisRun.run(config);
        System.out.println(outcome.table());
        assertEquals(java.util.List.of(), outcome.result().violations(), outcome.table());
    }
}
