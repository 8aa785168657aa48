package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquisitions of one client that wait for a session (before the first one of a client made
 * by {@code start()}, or after a loss), hooked on the client's future of the next session once for
 * all of them.
 *
 * <p>Why: a dependent added to a {@link CompletableFuture} stays on it until the future completes,
 * even when whoever added it no longer cares. While the ensemble is down, every acquisition
 * abandoned meanwhile (a timed-out {@code tryLock}, a cancelled future) would otherwise stay
 * reachable from that one future, with everything it holds, for as long as the outage lasts. Here
 * an abandoned wait leaves at once ({@link #await}'s returned action), and the future holds one
 * dependent whatever their number.
 *
 * <p>Thread-safe. Waiters are told outside this object's lock, on the thread that completes the
 * future (the client's events thread), in the order they began to wait.
 */
final class SessionWaits {

    private static final Logger log = LoggerFactory.getLogger(SessionWaits.class);

    // Guarded by this. One entry per future still awaited; removed when it completes.
    private final Map<CompletableFuture<ZkSession>, Set<BiConsumer<ZkSession, Throwable>>> waiting = new HashMap<>();

    /**
     * Tells {@code then} how {@code next} completes (a session, or a failure), unless the returned
     * action runs first. If {@code next} has completed already, {@code then} runs at once on the
     * calling thread.
     *
     * @return stops waiting: {@code then} is not told, and nothing of it stays on {@code next}
     */
    Runnable await(CompletableFuture<ZkSession> next, BiConsumer<ZkSession, Throwable> then) {
        if (next.isDone()) {
            next.whenComplete(then); // runs at once, and only this waiter
            return () -> { };
        }
        Set<BiConsumer<ZkSession, Throwable>> waiters;
        boolean first;
        synchronized (this) {
            waiters = waiting.get(next);
            first = waiters == null;
            if (first) {
                waiters = new LinkedHashSet<>();
                waiting.put(next, waiters);
            }
            waiters.add(then);
        }
        if (first) {
            next.whenComplete((session, failure) -> completed(next, session, failure));
        }
        Set<BiConsumer<ZkSession, Throwable>> mine = waiters;
        return () -> {
            synchronized (this) {
                mine.remove(then);
            }
        };
    }

    /** @return the waits not yet told, over every future (tests) */
    synchronized int size() {
        return waiting.values().stream().mapToInt(Set::size).sum();
    }

    private void completed(CompletableFuture<ZkSession> next, ZkSession session, Throwable failure) {
        List<BiConsumer<ZkSession, Throwable>> told;
        synchronized (this) {
            Set<BiConsumer<ZkSession, Throwable>> waiters = waiting.remove(next);
            told = waiters == null ? List.of() : new ArrayList<>(waiters);
            if (waiters != null) {
                waiters.clear();
            }
        }
        for (BiConsumer<ZkSession, Throwable> then : told) {
            try {
                then.accept(session, failure);
            } catch (RuntimeException e) {
                log.error("a wait for a session failed", e);
            }
        }
    }
}
