package io.zkcoord.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.KeeperState;

/**
 * A default watcher for a raw {@code ZooKeeper} client that records every connection state it is told, so a test
 * can wait for "Disconnected, then SyncConnected again" with a deadline. Thread-safe.
 */
public final class ConnectionStates implements Watcher {

    private final List<KeeperState> states = new ArrayList<>(); // guarded by this

    @Override
    public synchronized void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.None) {
            states.add(event.getState());
            notifyAll();
        }
    }

    /** Every state reported so far, oldest first. */
    public synchronized List<KeeperState> history() {
        return List.copyOf(states);
    }

    /** How many times {@code state} has been reported. */
    public synchronized int count(KeeperState state) {
        return (int) states.stream().filter(s -> s == state).count();
    }

    /** The latest state reported, or null if none yet. */
    public synchronized KeeperState current() {
        return states.isEmpty() ? null : states.get(states.size() - 1);
    }

    /**
     * Waits until {@code state} has been reported at least {@code times} times in all.
     *
     * @throws AssertionError on timeout
     */
    public synchronized void awaitCount(KeeperState state, int times, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (count(state) < times) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("state " + state + " not seen " + times + " times within "
                        + timeout.toMillis() + " ms; history " + states);
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    /** Waits until the latest state reported is {@code state}. */
    public synchronized void awaitCurrent(KeeperState state, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (current() != state) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("state is not " + state + " after " + timeout.toMillis()
                        + " ms; history " + states);
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
