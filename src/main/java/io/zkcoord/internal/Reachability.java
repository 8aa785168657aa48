package io.zkcoord.internal;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;

/**
 * Whether the client is connected to ZooKeeper, for a caller that must not wait out the client's
 * retry policy while it is not: a scheduler thread of the ShedLock provider, a thread polling the
 * Spring registry's {@code tryLock()}. Internal, not API: the library keeps it for its modules, so
 * that both answer by the same rule. An outage begins when the client leaves a
 * connected state and ends when it enters one again ({@link ConnectionState#isConnected()}).
 *
 * <p>During an outage, the first caller waits for a connection up to the client's connection
 * timeout; once one caller has waited that long in vain, every later caller of the same outage is
 * told at once. One line at WARN says so, once per outage; one at INFO when it ends.
 *
 * <p>Thread-safe: the state is guarded by this object's monitor; the listener runs on the client's
 * listener thread.
 */
public final class Reachability implements ConnectionListener {

    private final ZkClient client;
    private final Logger log;
    private final String what;
    /** Completes when the client is next connected; complete while it is. Guarded by this. */
    private CompletableFuture<Void> connected = new CompletableFuture<>();
    /** The outage ({@link #connected} of its time) that a caller waited out in vain, or null. Guarded by this. */
    private CompletableFuture<Void> waitedOut;
    /** When the current outage began (monotonic nanos). Guarded by this. */
    private long outageSince = System.nanoTime();

    /**
     * @param client the client to watch (a listener is added to it for the client's life)
     * @param log where the one-line outage messages go
     * @param what what is not done during an outage, for the messages ("ShedLock runs are skipped")
     * @throws IllegalStateException if the client is closed
     */
    public Reachability(ZkClient client, Logger log, String what) {
        this.client = client;
        this.log = log;
        this.what = what;
        client.addConnectionListener(this);
        stateChanged(client.state());
    }

    @Override
    public void stateChanged(ConnectionState state) {
        boolean recovered;
        synchronized (this) {
            if (state.isConnected()) {
                recovered = waitedOut == connected;
                connected.complete(null);
            } else {
                recovered = false;
                if (connected.isDone()) {
                    connected = new CompletableFuture<>();
                    outageSince = System.nanoTime();
                }
            }
        }
        if (recovered) {
            log.info("ZooKeeper at {} is reachable again ({})", client.connectString(), state);
        }
    }

    /**
     * Waits until the client is connected, at most {@code maxWait}; at once if a caller already
     * waited the whole connection timeout in vain during this outage.
     *
     * @param interruptible false to wait on through interrupts (the interrupt is set again on return)
     * @return true if connected
     * @throws InterruptedException if interrupted while waiting, and {@code interruptible}
     */
    public boolean awaitConnected(Duration maxWait, boolean interruptible) throws InterruptedException {
        CompletableFuture<Void> next;
        synchronized (this) {
            next = connected;
            if (next.isDone()) {
                return true;
            }
            if (waitedOut == next) {
                return false;
            }
        }
        long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    next.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return true;
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    return false;
                } catch (ExecutionException e) {
                    return false;   // never completed exceptionally
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return true if a caller waited the whole connection timeout in vain during the current outage */
    public synchronized boolean waitedOut() {
        return !connected.isDone() && waitedOut == connected;
    }

    /**
     * Waits for a connection up to the client's connection timeout (see {@link #awaitConnected}); if
     * there is none, marks the outage as waited out and logs it once.
     *
     * @param interruptible false to wait on through interrupts (the interrupt is set again on return)
     * @return empty if connected, else the one-line description of the outage
     * @throws InterruptedException if interrupted while waiting, and {@code interruptible}
     */
    public Optional<String> unreachable(boolean interruptible) throws InterruptedException {
        if (awaitConnected(client.connectionTimeout(), interruptible)) {
            return Optional.empty();
        }
        boolean first;
        String description;
        synchronized (this) {
            if (connected.isDone()) {
                return Optional.empty();
            }
            first = waitedOut != connected;
            waitedOut = connected;
            description = "ZooKeeper unreachable at " + client.connectString() + ": no connection for "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - outageSince) + " ms (" + client.state() + ")";
        }
        if (first) {
            log.warn("{}; {} until it is back, without waiting", description, what);
        }
        return Optional.of(description);
    }
}
