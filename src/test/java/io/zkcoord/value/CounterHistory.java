package io.zkcoord.value;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A recorded history of additions to one counter, and its check: the final value must equal the
 * sum of the acknowledged additions plus the sum of some subset of those that ended unknown (an
 * exception: applied once or not at all). A value that needs an addition counted twice, or an
 * acknowledged one dropped, fails. Thread-safe recording.
 */
final class CounterHistory {

    private final List<Long> acknowledged = new ArrayList<>();
    private final List<Long> unknown = new ArrayList<>();

    synchronized void acknowledged(long delta) {
        acknowledged.add(delta);
    }

    synchronized void unknown(long delta) {
        unknown.add(delta);
    }

    synchronized int acknowledgedCount() {
        return acknowledged.size();
    }

    synchronized int unknownCount() {
        return unknown.size();
    }

    /** @return null if {@code finalValue} is explained by the history, else why not */
    synchronized String check(long start, long finalValue) {
        long base = start + acknowledged.stream().mapToLong(Long::longValue).sum();
        Set<Long> reachable = new HashSet<>();
        reachable.add(0L);
        for (long d : unknown) {
            Set<Long> next = new HashSet<>(reachable);
            for (long r : reachable) {
                next.add(r + d);
            }
            reachable = next;
        }
        if (reachable.contains(finalValue - base)) {
            return null;
        }
        return "final value " + finalValue + " is not start " + start + " + the " + acknowledged.size()
                + " acknowledged additions (" + (base - start) + ") + a subset of the " + unknown.size()
                + " unknown ones " + unknown;
    }
}
