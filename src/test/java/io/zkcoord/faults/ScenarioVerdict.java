package io.zkcoord.faults;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a fault scenario, shared by {@link InvariantChecker} and {@link PermitLedger}: its report
 * logged, its violations thrown as one {@link AssertionError}, its client threads awaited by a deadline.
 * Stateless and thread-safe.
 */
final class ScenarioVerdict {

    private static final Logger log = LoggerFactory.getLogger(ScenarioVerdict.class);

    private ScenarioVerdict() {
    }

    /** Logs {@code summary} as the report; throws an {@link AssertionError} listing {@code found} if not empty. */
    static void assertNone(String scenario, List<String> found, String summary) {
        log.info("REPORT {}", summary);
        if (!found.isEmpty()) {
            throw new AssertionError(scenario + ": " + found.size() + " violation(s):\n  "
                    + String.join("\n  ", found) + "\n" + summary);
        }
    }

    /**
     * Waits, until {@code within} has passed, for every client thread's work to end; throws an
     * {@link AssertionError} for the first that failed, or naming how many still run at the deadline.
     */
    static void assertAllDone(String scenario, List<? extends Future<?>> work, Duration within,
            Supplier<String> summary) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        for (int i = 0; i < work.size(); i++) {
            try {
                work.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                long running = work.stream().filter(f -> !f.isDone()).count();
                throw new AssertionError(scenario + ": " + running + " client thread(s) still running after "
                        + within.toMillis() + " ms; " + summary.get());
            } catch (ExecutionException e) {
                throw new AssertionError(scenario + ": client thread " + i + " failed: " + e.getCause(),
                        e.getCause());
            }
        }
    }
}
