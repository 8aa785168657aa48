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
 */
final class Schedule {

    private final Faults faults;
    private final List<Faults.Kind> kinds;
    private final Random random;
    private final History.Writer log;

    Schedule(Faults faults, List<Faults.Kind> kinds, Random random, History.Writer log) {
        this.faults = faults;
        this.kinds = kinds;
        this.random = random;
        this.log = log;
    }

    /** Injects faults until {@code duration} has passed; @return how many were started */
    int run(Duration duration) throws Exception {
        long end = System.nanoTime() + duration.toNanos();
        int started = 0;
        if (kinds.isEmpty()) {
            Thread.sleep(duration.toMillis()); // no faults: the workloads just run for the duration
            return 0;
        }
        while (true) {
            long gap = 300 + random.nextInt(2200);
            if (System.nanoTime() + gap * 1_000_000 >= end) {
                break;
            }
            Thread.sleep(gap); // the schedule's own rhythm, drawn from the seed
            Faults.Kind kind = kinds.get(random.nextInt(kinds.size()));
            try {
                if (faults.inject(kind)) {
                    started++;
                }
            } catch (Exception e) {
                log.record("", "error", kind.label, "", 0, 0, e.toString());
            }
        }
        long rest = (end - System.nanoTime()) / 1_000_000;
        if (rest > 0) {
            Thread.sleep(rest);
        }
        return started;
    }
}
