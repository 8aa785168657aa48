package io.zkcoord.shedlock;

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
 * retry policy while it is not (a scheduler thread). The Spring module has a class of this name
 * with the same rule (each module is a project of its own). An outage begins when the client leaves a
 * connected state and ends when it enters one again ({@link ConnectionState#isConnected()}).
 *
 * <p>During an outage, the first caller waits for a connection up to the client's connection
 * timeout; once one caller has waited that long in vain, every later caller of the same outage is
 * told at once. One line at WARN says so, once per outage; one at INFO when it ends.
 *
 * <p>Thread-safe: the state is guarded by this object's monitor; the listener runs on the client's
 * listener thread.
 */
final class Reachability implements ConnectionListener {

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
    Reachability(ZkClient client, Logger log, String what) {
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
     * @return true if connected
     * @throws InterruptedException if interrupted while waiting
     */
    boolean awaitConnected(Duration maxWait) throws InterruptedException {
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
        try {
            next.get(Math.max(0, maxWait.toNanos()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return false;   // never completed exceptionally
        }
    }

    /**
     * Waits for a connection up to the client's connection timeout (see {@link #awaitConnected}); if
     * there is none, marks the outage as waited out and logs it once.
     *
     * @return empty if connected, else the one-line description of the outage
     * @throws InterruptedException if interrupted while waiting
     */
    Optional<String> unreachable() throws InterruptedException {
        if (awaitConnected(client.connectionTimeout())) {
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
