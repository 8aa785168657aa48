package io.zkcoord.nemesis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checker can fail: the same machinery with broken workloads must report violations.
 * <ul>
 *   <li>{@code unlocked}: no lock at all and blind writes: holds overlap and increments are lost, faults or not;</li>
 *   <li>{@code unfenced}: a real {@link io.zkcoord.lock.ZkMutex}, but the register is written through a second
 *       client with a long session and no token compare: the holder paused (SIGSTOP) past its session writes
 *       over its successor when resumed, and the checker must see the stale write accepted.</li>
 * </ul>
 * The only fault is {@link Faults.Kind#PAUSE_HOLDER_PAST_HANDOFF}: the unfenced lock's holder is paused in its
 * hold (about a second of writes) and resumed only once its session has expired and its successor has written
 * the register, so every such pause sets up the stale write however slow the machine; the schedule starts once
 * every workload runs, and the last pause is not cut short by the end of the schedule.
 */
class NemesisCheckerFailsTest {

    @Test
    @Timeout(value = 10, unit = java.util.concurrent.TimeUnit.MINUTES) // a safety net: every wait has its own limit
    void unlockedAndUnfencedWorkloadsAreReported() throws Exception {
        NemesisRun.Config config = new NemesisRun.Config(3, 3, List.of("unlocked", "unfenced"),
                List.of(Faults.Kind.PAUSE_HOLDER_PAST_HANDOFF), Duration.ofSeconds(15), NemesisTest.seed(),
                NemesisTest.SESSION, NemesisTest.outDir(), true);
        NemesisRun.Outcome outcome = NemesisRun.run(config);
        System.out.println(outcome.table());
        List<Checker.Violation> violations = outcome.result().violations();
        assertTrue(violations.stream().anyMatch(v -> v.workload().equals("unlocked")
                && v.rule().equals("overlapping holds")), "unlocked holds overlapped unseen:\n" + outcome.table());
        assertTrue(violations.stream().anyMatch(v -> v.workload().equals("unlocked")
                && (v.rule().equals("lost update") || v.rule().equals("register count"))),
                "unlocked blind writes lost nothing?\n" + outcome.table());
        assertTrue(violations.stream().anyMatch(v -> v.workload().equals("unfenced")
                && v.rule().equals("stale write accepted")), "no stale write of a paused holder seen:\n"
                + outcome.table());
        assertTrue(violations.stream().noneMatch(v -> v.workload().equals("unfenced")
                && v.rule().equals("overlapping holds")), "the lock itself held:\n" + outcome.table());
    }
}
