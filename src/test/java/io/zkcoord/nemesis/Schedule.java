package io.zkcoord.nemesis;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The randomized fault schedule: from the seed's random stream, a pause of 0.3 to 2.5 s, then a fault of a kind
 * drawn from the enabled ones, again and again until the time is up. Faults last longer than the gaps between
 * them, so several overlap (a paused client during a partition during a server restart...). A fault whose
 * targets are all busy is skipped. The same seed gives the same sequence of draws; what the ensemble does in
 * between (who leads, who holds) still varies, so a replay repeats the schedule, not every interleaving.
 *
 * <p>A heal: whenever, after a fault was started, none is active any more (every link healed, every paused or
 * killed process back), the schedule waits up to {@link #QUORUM_WAIT} for every server to serve and then, before
 * it goes on, calls its {@link HealPoint} (the caches' {@link QuietRounds}). The heal point draws nothing from the
 * seed's stream and takes its time out of the run's, so the wall time stays the same.
 */
final class Schedule {

    private final Faults faults;
    private final List<Faults.Kind> kinds;
    private final Random random;
    private final History.Writer log;
    private final Ensemble ensemble;
    private final HealPoint healPoint;
    /** The longest a heal point waits for every server to serve before it gives up on that heal. */
    private static final Duration QUORUM_WAIT = Duration.ofSeconds(5);
    /** Faults started so far. */
    private int started;
    /** {@link #started} when the last heal point ran. */
    private int healedAt;

    /** What runs at each heal. */
    interface HealPoint {
        /** @param runEnd when the schedule ends ({@link System#nanoTime()}): the heal point should be done by then */
        void healed(long runEnd) throws Exception;
    }

    Schedule(Faults faults, List<Faults.Kind> kinds, Random random, History.Writer log, Ensemble ensemble,
            HealPoint healPoint) {
        this.faults = faults;
        this.kinds = kinds;
        this.random = random;
        this.log = log;
        this.ensemble = ensemble;
        this.healPoint = healPoint;
    }

    /** Injects faults until {@code duration} has passed (call once); @return how many were started */
    int run(Duration duration) throws Exception {
        long end = System.nanoTime() + duration.toNanos();
        if (kinds.isEmpty()) {
            Thread.sleep(duration.toMillis()); // no faults: the workloads just run for the duration
            return 0;
        }
        while (true) {
            long gap = 300 + random.nextInt(2200);
            if (System.nanoTime() + gap * 1_000_000 >= end) {
                break;
            }
            waitHealing(System.nanoTime() + gap * 1_000_000, end); // the schedule's own rhythm, drawn from the seed
            Faults.Kind kind = kinds.get(random.nextInt(kinds.size()));
            try {
                if (faults.inject(kind)) {
                    started++;
                }
            } catch (Exception e) {
                log.record("", "error", kind.label, "", 0, 0, e.toString());
            }
        }
        waitHealing(end, end);
        return started;
    }

    /**
     * Waits until {@code until}, running the heal point whenever every fault started so far has ended (once per
     * heal).
     */
    private void waitHealing(long until, long end) throws Exception {
        while (true) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                return;
            }
            if (started > healedAt && faults.activeCount() == 0) {
                healedAt = started;
                if (ensemble.awaitAllServing(QUORUM_WAIT)) {
                    try {
                        healPoint.healed(end);
                    } catch (RuntimeException e) {
                        log.record("", "error", "heal-point", "", 0, 0, e.toString());
                    }
                } else {
                    log.record("", "info", "heal-point", "", 0, 0, "skipped: " + ensemble.describe());
                }
                continue;
            }
            Thread.sleep(Math.min(100, left / 1_000_000 + 1));
        }
    }
}
