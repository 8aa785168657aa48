package io.zkcoord.session;

import io.zkcoord.ConnectFailedException;
import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.client.ZooKeeperSaslClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connecting and probing, for {@link SessionLifecycle#start()}: waits for the first session at
 * most the connection timeout (give or take a few milliseconds) whatever the network does, and
 * when none comes says why. Halfway through the wait each server is probed ({@link ConnectProbe}:
 * an unknown host, a refused connection, a silent port); a TLS client is probed earlier ({@link
 * TlsProbe}), and fails at once when every server refuses its TLS for good; a SASL login is waited
 * for too, since ZooKeeper reports a session before it answers the login.
 *
 * <p>Used once, by the thread that calls {@code start()}.
 */
final class FirstConnection {

    private static final Logger log = LoggerFactory.getLogger(FirstConnection.class);
    /** How long a TLS client waits for its first session before probing the servers' TLS. */
    private static final long TLS_PROBE_DELAY_MILLIS = 500;

    private final SessionLifecycle lifecycle;
    private final ClientSettings settings;
    private final String name;

    FirstConnection(SessionLifecycle lifecycle, ClientSettings settings, String name) {
        this.lifecycle = lifecycle;
        this.settings = settings;
        this.name = name;
    }

    /**
     * Connects and waits for the first session; on failure leaves no thread behind for long.
     *
     * @throws ConnectFailedException if no session came within the connection timeout
     * @throws CoordinationException if the handle could not be made, the chroot cannot be created,
     *     authentication or TLS was refused, or if interrupted (the interrupt flag is then set again)
     */
    void await() {
        long startNanos = System.nanoTime();
        long timeoutNanos = settings.connectionTimeout().toNanos();
        CompletableFuture<Void> first = new CompletableFuture<>();
        ConnectionListener firstConnect = s -> {
            if (s == ConnectionState.CONNECTED) {
                first.complete(null);
            }
        };
        lifecycle.addListener(firstConnect);
        AtomicReference<ConnectProbe> probe = new AtomicReference<>();
        CompletableFuture<Void> sasl = new CompletableFuture<>();
        lifecycle.awaitingFirstSession(first, sasl);
        try {
            lifecycle.openFirstHandle(first::completeExceptionally);
            lifecycle.startChecks();
            probeTlsUnlessConnected(first);
            lifecycle.scheduler().schedule(() -> {
                if (!first.isDone()) {
                    ConnectProbe p = ConnectProbe.start(ConnectString.parse(settings.connectString()).servers(),
                            Duration.ofNanos(timeoutNanos / 2), name + "-probe");
                    // Built once now and dropped: the first failure in a JVM would otherwise load and
                    // link the classes of its report after the deadline, on the caller's time.
                    p.failure(settings.connectString(), 0, settings.sessionTimeout(), null, null);
                    probe.set(p);
                }
            }, timeoutNanos / 2, TimeUnit.NANOSECONDS);
            first.get(Math.max(0, timeoutNanos - (System.nanoTime() - startNanos)), TimeUnit.NANOSECONDS);
            awaitSaslLogin(sasl, timeoutNanos - (System.nanoTime() - startNanos));
        } catch (InterruptedException e) {
            lifecycle.abandonStart();
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while connecting to " + settings.connectString(), e);
        } catch (ExecutionException e) {
            lifecycle.abandonStart();
            if (e.getCause() instanceof CoordinationException c) {
                throw c; // the chroot cannot be created, or authentication or TLS refused: its message says why
            }
            throw new CoordinationException("cannot connect to " + settings.connectString() + ": " + e.getCause(),
                    e.getCause());
        } catch (TimeoutException e) {
            lifecycle.abandonStart();
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
            ConnectProbe p = probe.get();
            if (p == null) {
                throw new ConnectFailedException(ConnectFailedException.Problem.TIMEOUT, "no ZooKeeper session at "
                        + settings.connectString() + " within " + waitedMillis + " ms: timed out", e);
            }
            throw p.failure(settings.connectString(), waitedMillis, settings.sessionTimeout(),
                    lifecycle.connectProblem(), e);
        } finally {
            lifecycle.removeListener(firstConnect);
            lifecycle.awaitingFirstSession(null, null);
        }
    }

    /**
     * ZooKeeper reports a session as connected before its SASL login is answered; a refused login
     * comes later, as {@code AuthFailed}. So {@link #await()} waits for the answer too (at most
     * {@code remainingNanos}) when the first handle logs in with SASL, and fails if it is refused.
     */
    private void awaitSaslLogin(CompletableFuture<Void> sasl, long remainingNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        // Not login.isFailed(): ZooKeeper marks a client whose JAAS configuration cannot be loaded
        // failed, yet connects it without SASL and sends no AuthFailed; only that event counts.
        ZooKeeperSaslClient login = lifecycle.zooKeeper().getSaslClient();
        boolean inProgress = login != null && login.clientTunneledAuthenticationInProgress() && !login.isComplete();
        if (inProgress || sasl.isCompletedExceptionally()) {
            sasl.get(Math.max(1, remainingNanos), TimeUnit.NANOSECONDS);
        }
    }

    /** @return why a session cannot come while the server refuses this client's SASL login */
    static CoordinationException authenticationFailed(ClientSettings settings) {
        return new CoordinationException("no ZooKeeper session at " + settings.connectString() + ": authentication"
                + " failed (the server refused this client's SASL login; check the JAAS section "
                + saslSection(settings) + " and its credentials)");
    }

    /**
     * For a TLS client: if no session came within a moment, probes the servers' TLS ({@link
     * TlsProbe}) on a thread of its own, and fails {@code first} at once if every server refuses
     * in a way that retrying cannot change (untrusted certificate, host name, client certificate,
     * plain-text port). ZooKeeper's client gives no such signal: it logs and tries again.
     */
    private void probeTlsUnlessConnected(CompletableFuture<Void> first) {
        if (!TlsProbe.isSecure(settings.clientConfig())) {
            return;
        }
        long timeoutMillis = settings.connectionTimeout().toMillis();
        long delayMillis = Math.min(TLS_PROBE_DELAY_MILLIS, timeoutMillis / 4);
        Thread probe = new Thread(() -> {
            try {
                first.get(delayMillis, TimeUnit.MILLISECONDS);
                return; // connected, or failed otherwise
            } catch (TimeoutException e) {
                // no session yet: look
            } catch (InterruptedException | ExecutionException e) {
                return;
            }
            TlsProbe.probe(settings.connectString(), settings.clientConfig(), Math.max(1, timeoutMillis / 2))
                    .ifPresent(refused -> {
                        if (!first.isDone()) {
                            log.info("{}: {}", name, refused.getMessage());
                            first.completeExceptionally(refused);
                        }
                    });
        }, name + "-tls-probe");
        probe.setDaemon(true);
        probe.start();
    }

    /** @return the JAAS section ZooKeeper's client logs in with, named as the setting names it */
    private static String saslSection(ClientSettings settings) {
        String section = settings.clientConfig().getProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY,
                ZKClientConfig.LOGIN_CONTEXT_NAME_KEY_DEFAULT);
        return "'" + section + "' (" + ZKClientConfig.LOGIN_CONTEXT_NAME_KEY + ")";
    }
}
