package io.zkcoord.session;

import io.zkcoord.ConnectionState;
import io.zkcoord.TlsConnectException;
import io.zkcoord.ZkClient;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * While a TLS client has no session (a client made by {@link ZkClient.Builder#start()} before its
 * first one, any client after a {@link ConnectionState#LOST}), finds out whether the servers refuse
 * its TLS for good. ZooKeeper's client keeps a failed handshake to its own log and tries again and
 * again; without this, everything waiting for a session would wait out its own time limit.
 *
 * <p>After {@link #FIRST_PROBE_MILLIS} without a session, and every {@link #PROBE_INTERVAL_MILLIS}
 * after that until a session comes, the servers are probed ({@link TlsProbe}, as {@link
 * ZkClient.Builder#build()} does) on a thread of its own, and the verdict is handed to the client
 * on its events thread: the {@link TlsConnectException} when every server refuses in a way that
 * retrying cannot change, or empty (any server completed a handshake, or could not be reached: not
 * a TLS question). A refusal is logged once at ERROR (again only if its message changes), and its
 * end at INFO. The client itself keeps trying all along: a certificate or a trust store can be
 * fixed.
 *
 * <p>Not thread-safe: every method but {@link #close()} runs on the client's events thread.
 */
final class TlsWatch {

    private static final Logger log = LoggerFactory.getLogger(TlsWatch.class);
    /** As {@link ZkClient.Builder#build()}: a TLS client without a session this long is probed. */
    static final long FIRST_PROBE_MILLIS = 500;
    /** Between probes while there is still no session. */
    static final long PROBE_INTERVAL_MILLIS = 2_000;

    private final ClientSettings settings;
    private final String name;
    private final ScheduledExecutorService events;
    private final BooleanSupplier withoutSession;
    private final Consumer<Optional<TlsConnectException>> verdict;
    /** A round of probes is scheduled or running. */
    private boolean watching;
    /** Bumped when a session comes: a verdict of an older round is dropped. */
    private int round;
    /** The refusal last logged, until it ends. */
    private String logged;
    /** The probe running now, if any: interrupted by {@link #close()}. */
    private volatile Thread prober;
    private volatile boolean closed;

    /**
     * @param settings the client's settings (connect string, TLS configuration, connection timeout)
     * @param name the client's name, for logs and the probe thread's name
     * @param events the client's events thread
     * @param withoutSession true while the client has no live session and is not closed
     * @param verdict told each verdict, on the events thread, while there is still no session
     */
    TlsWatch(ClientSettings settings, String name, ScheduledExecutorService events, BooleanSupplier withoutSession,
            Consumer<Optional<TlsConnectException>> verdict) {
        this.settings = settings;
        this.name = name;
        this.events = events;
        this.withoutSession = withoutSession;
        this.verdict = verdict;
    }

    /** The client has no session now: probes, unless it is no TLS client or probes are under way. */
    void noSession() {
        if (watching || !TlsProbe.isSecure(settings.clientConfig())) {
            return;
        }
        watching = true;
        long first = Math.min(FIRST_PROBE_MILLIS, Math.max(1, settings.connectionTimeout().toMillis() / 4));
        schedule(round, first);
    }

    /** A session came: no more probes; a refusal that was logged is said to be over. */
    void sessionEstablished() {
        round++;
        watching = false;
        if (logged != null) {
            log.info("{}: connected over TLS; the TLS refusal logged before is over", name);
            logged = null;
        }
    }

    private void schedule(int r, long delayMillis) {
        try {
            events.schedule(() -> probe(r), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            watching = false;
        }
    }

    /** Events thread: starts one probe on a thread of its own, unless a session came meanwhile. */
    private void probe(int r) {
        if (r != round) {
            return;
        }
        if (closed || !withoutSession.getAsBoolean()) {
            watching = false; // the client closed
            return;
        }
        long budget = Math.max(1, settings.connectionTimeout().toMillis() / 2);
        Thread t = new Thread(() -> {
            Optional<TlsConnectException> refused = TlsProbe.probe(settings.connectString(), settings.clientConfig(),
                    budget);
            try {
                events.execute(() -> judged(r, refused));
            } catch (RejectedExecutionException closing) {
                // the client closed meanwhile: nobody waits for the verdict
            }
        }, name + "-tls-probe");
        t.setDaemon(true);
        prober = t;
        t.start();
        if (closed) {
            t.interrupt(); // close() may have read the field before it was set
        }
    }

    /**
     * The client closes: a probe under way gives up at once, so that none of its threads outlives
     * the client by more than a moment. Any thread.
     */
    void close() {
        closed = true;
        Thread t = prober;
        if (t != null) {
            t.interrupt();
        }
    }

    /** Events thread: hands the verdict over while there is still no session, then probes again later. */
    private void judged(int r, Optional<TlsConnectException> refused) {
        if (r != round) {
            return; // a session came: the verdict is stale
        }
        if (!withoutSession.getAsBoolean()) {
            watching = false; // the client closed
            return;
        }
        log.debug("{}: TLS probe verdict: {}", name, refused.map(e -> e.problem().toString()).orElse("not refused"));
        if (refused.isPresent() && !refused.get().getMessage().equals(logged)) {
            logged = refused.get().getMessage();
            log.error("{}: {}; acquisitions waiting for a session fail at once with TlsConnectException ({}) while"
                    + " this lasts; the client keeps trying", name, logged, refused.get().problem());
        } else if (refused.isEmpty() && logged != null) {
            log.info("{}: the servers no longer refuse this client's TLS; waiting for a session again", name);
            logged = null;
        }
        verdict.accept(refused);
        schedule(r, PROBE_INTERVAL_MILLIS);
    }
}
