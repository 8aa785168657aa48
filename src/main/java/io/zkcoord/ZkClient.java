package io.zkcoord;

import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.Observer;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.retry.ZkCall;
import io.zkcoord.session.ClientSettings;
import io.zkcoord.session.ConnectString;
import io.zkcoord.session.SessionAccess;
import io.zkcoord.session.SessionLifecycle;
import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;

/**
 * Owns the ZooKeeper session of one application and tells the truth about it. Keep one per
 * ensemble; every lock made on it shares its session.
 *
 * <pre>{@code
 * try (ZkClient client = ZkClient.builder()
 *         .connectString("127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183")
 *         .sessionTimeout(Duration.ofSeconds(10))
 *         .build()) {                        // returns connected, or throws
 *     client.addConnectionListener(state -> log.info("zookeeper {}", state));
 *     ZkMutex mutex = new ZkMutex(client, "/locks/orders");
 *     ...
 * }                                          // ends the session: its ephemeral nodes go
 * }</pre>
 *
 * <h2>Starting before the ensemble</h2>
 * {@link Builder#build()} waits for the first session and throws if there is none within the
 * connection timeout. {@link Builder#start()} returns at once instead, in state {@link
 * ConnectionState#CONNECTING}, and connects in the background, retrying until it is closed: for a
 * service that must start while ZooKeeper is down (a rolling restart, a fresh deployment). Locks,
 * semaphores and elections made on it before the first session wait for one under their own time
 * limits, exactly as they wait for a new session after {@link ConnectionState#LOST}.
 *
 * <h2>Session loss</h2>
 * The raw ZooKeeper client learns that its session expired only when it reaches a server again.
 * During a partition a lock holder would go on believing it holds its locks long after the
 * ensemble handed them to someone else. This client therefore declares {@link
 * ConnectionState#LOST} by itself once no server has been reached for the whole negotiated session
 * timeout, counted from the moment the disconnection was seen. Either way, after {@code LOST} it
 * closes the dead handle and builds a new session on its own, retrying until it connects or is
 * closed; {@link #zooKeeper()} then returns the new handle. A session it presumed lost may still
 * exist on the ensemble (a whole ensemble that restarts restores its sessions): the client ends it
 * there as soon as a server is reachable, so that its nodes do not stand ahead of the new
 * session's in any queue (see {@link ConnectionState#LOST}).
 *
 * <h2>Listeners and callbacks</h2>
 * {@link ConnectionListener}s run on one library thread, in order; whatever one throws (any
 * {@link Throwable}) is logged and the others are still told. User code the recipes run (loss
 * listeners, completions of the futures they return) runs on a library thread of its own, never on
 * ZooKeeper's. {@link CoordinationListener}s see every recipe's waits and holds (metrics, Flight
 * Recorder); that interface says on which threads.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe. The session lifecycle is one state machine ({@code io.zkcoord.session.SessionLifecycle}) whose
 * transitions all run on one library thread; {@link #state()} and {@link #zooKeeper()} read
 * volatile fields.
 */
public final class ZkClient implements AutoCloseable {

    private static final AtomicInteger CLIENT_IDS = new AtomicInteger();

    static {
        ClientServices.provide(client -> client.services);
        SessionAccess.provide(new SessionAccess.Maker() {
            @Override
            public ZkSession open(ZooKeeper zooKeeper, io.zkcoord.retry.RetryLoop retryLoop) {
                return new ZkSession(zooKeeper, retryLoop);
            }

            @Override
            public void end(ZkSession session) {
                session.end();
            }
        });
    }

    private final ClientSettings settings;
    private final SessionLifecycle lifecycle;
    private final ClientServices services;

    private ZkClient(ClientSettings settings) {
        this.settings = settings;
        this.lifecycle = new SessionLifecycle(settings, "zkcoord-" + CLIENT_IDS.incrementAndGet());
        Observer observer = new Observer(lifecycle.name(), lifecycle::runCallback);
        lifecycle.addListener(observer::sessionStateChanged);
        this.services = new ClientServices(lifecycle.name(), lifecycle::liveSession,
                lifecycle::liveSessionUnlessRefused, lifecycle.scheduler(),
                lifecycle::runCallback, settings.retryPolicy(), settings.aclProvider() == null ? settings.acl() : null,
                settings::aclFor, lifecycle::isClosed, settings.chroot(), () -> lifecycle.state().isConnected(), observer);
    }

    /** @return a builder with the defaults documented on each of its methods */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The live handle of the current session. After {@link ConnectionState#LOST} this is a new
     * handle; do not keep it across a loss.
     *
     * @return the handle of the current session
     * @throws IllegalStateException if the client is closed
     */
    public ZooKeeper zooKeeper() {
        ensureOpen();
        return lifecycle.zooKeeper();
    }

    /**
     * @return the id of the latest established session; 0 while {@link ConnectionState#CONNECTING}
     *     (never after {@link Builder#build()}, which returns only with a session)
     * @throws IllegalStateException if the client is closed
     */
    public long sessionId() {
        ensureOpen();
        ZkSession s = lifecycle.session();
        return s == null ? 0 : s.id();
    }

    /**
     * Returns the current session, waiting for one to be established (the first one of a client
     * made by {@link Builder#start()}, or a new one after a {@link ConnectionState#LOST}) as long as
     * the retry policy allows.
     *
     * @return the current session
     * @throws IllegalStateException if the client is closed, also while waiting
     * @throws TlsConnectException at once, while every server refuses this TLS client's settings
     *     in a way that retrying cannot change (see {@link Builder#start()})
     * @throws CoordinationException if no session is established within the retry policy
     * @throws InterruptedException if interrupted while waiting
     */
    public ZkSession session() throws InterruptedException {
        return awaitSession(Long.MAX_VALUE).orElseThrow();
    }

    /**
     * Returns the current session, waiting at most {@code maxWait} for one to be established
     * (the first one while {@link ConnectionState#CONNECTING}, or a new one after a {@link
     * ConnectionState#LOST}), and no longer than the retry policy allows. For
     * callers with a deadline of their own, such as a timed {@code tryLock}.
     *
     * @param maxWait how long to wait at most; zero means do not wait
     * @return the session, or empty if none was established within {@code maxWait}
     * @throws IllegalArgumentException if {@code maxWait} is null or negative
     * @throws IllegalStateException if the client is closed, also while waiting
     * @throws TlsConnectException at once, while every server refuses this TLS client's settings
     *     in a way that retrying cannot change (see {@link Builder#start()})
     * @throws CoordinationException if the retry policy gives up before {@code maxWait} ends
     * @throws InterruptedException if interrupted while waiting
     */
    public Optional<ZkSession> session(Duration maxWait) throws InterruptedException {
        if (maxWait == null || maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must be zero or more, was " + maxWait);
        }
        return awaitSession(maxWait.compareTo(Duration.ofDays(365)) > 0 ? Long.MAX_VALUE : maxWait.toNanos());
    }

    private Optional<ZkSession> awaitSession(long maxWaitNanos) throws InterruptedException {
        Clock clock = settings.clock();
        long start = clock.nanoTime();
        for (int retries = 0; ; retries++) {
            ensureOpen();
            CompletableFuture<ZkSession> live = lifecycle.liveSessionUnlessRefused();
            if (live.isDone() && !live.isCompletedExceptionally()) {
                return Optional.of(live.join());
            }
            refusedTls(live).ifPresent(refused -> {
                throw new TlsConnectException(refused.problem(), "no ZooKeeper session at " + settings.connectString()
                        + ": " + refused.getMessage(), refused);
            });
            long elapsedNanos = clock.nanoTime() - start;
            if (elapsedNanos >= maxWaitNanos) {
                return Optional.empty();
            }
            Duration elapsed = Duration.ofNanos(elapsedNanos);
            Optional<Duration> delay = settings.retryPolicy().retryDelay(retries, elapsed);
            if (delay.isEmpty()) {
                throw new CoordinationException("no ZooKeeper session at " + settings.connectString() + " after "
                        + elapsed.toMillis() + " ms under " + settings.retryPolicy() + "; state " + state());
            }
            long waitNanos = Math.min(delay.get().toNanos(), maxWaitNanos - elapsedNanos);
            try {
                live.get(Math.max(1, waitNanos), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // closed (checked at the top of the loop), or not yet: count a retry
            }
        }
    }

    /** @return the TLS refusal {@code future} failed with, if it failed so */
    private static Optional<TlsConnectException> refusedTls(CompletableFuture<ZkSession> future) {
        if (!future.isCompletedExceptionally()) {
            return Optional.empty();
        }
        try {
            future.join();
            return Optional.empty();
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause() instanceof TlsConnectException t ? Optional.of(t) : Optional.empty();
        } catch (java.util.concurrent.CancellationException e) {
            return Optional.empty();
        }
    }

    /**
     * Runs {@code call} under the client's retry policy on whatever session is current at each
     * try. For calls that do not depend on one session (reading shared data, creating persistent
     * nodes); calls tied to a session use {@link ZkSession#call}. A session expiry during the call
     * is therefore passing, like a connection loss: the next try goes to the new session. The call
     * is synchronous: while the network is silent it may block until ZooKeeper gives up on the
     * connection.
     *
     * @param path the znode concerned, for messages
     * @param call the call; it must be safe to repeat
     * @param <T> what the call returns
     * @return what the call returned
     * @throws IllegalStateException if the client is closed
     * @throws CoordinationException if the retry policy gives up
     * @throws KeeperException any error that is not passing, as ZooKeeper reported it
     * @throws InterruptedException if interrupted while waiting
     */
    public <T> T call(String path, ZkCall<T> call) throws KeeperException, InterruptedException {
        return lifecycle.retryLoop().runOnAnySession(path, this::zooKeeper, call);
    }

    /**
     * @return the current state: {@link ConnectionState#CONNECTING} until the first session of a
     *     client made by {@link Builder#start()}; {@link ConnectionState#CLOSED} as soon as {@link
     *     #close()} has been called, even before the listeners have been told
     */
    public ConnectionState state() {
        return lifecycle.state();
    }

    /**
     * @return the ACL given to every node the recipes create: the one set by {@link
     *     Builder#acl(List)}, or the default
     * @throws IllegalStateException if the client was built with {@link Builder#aclProvider}: each
     *     path has its own ACL, see {@link #aclFor(String)}
     */
    public List<ACL> acl() {
        if (settings.aclProvider() != null) {
            throw new IllegalStateException(lifecycle.name() + " gives each path its own ACL (aclProvider):"
                    + " ask aclFor(path)");
        }
        return settings.acl();
    }

    /**
     * The ACL the recipes give a node at {@code path}: the {@link Builder#aclProvider} 's answer
     * for it, or else the one ACL of {@link #acl()}. Calls the provider on the calling thread.
     *
     * @param path the node's path as this client names it: without the connect string's chroot
     * @return the ACL, an unmodifiable list
     * @throws IllegalArgumentException if {@code path} is null
     * @throws IllegalStateException if the provider gives null, an empty list or a list with a
     *     null element
     */
    public List<ACL> aclFor(String path) {
        if (path == null) {
            throw new IllegalArgumentException("path must not be null");
        }
        return settings.aclFor(path);
    }

    /** @return the retry policy for operations of this client */
    public RetryPolicy retryPolicy() {
        return settings.retryPolicy();
    }

    /**
     * @return the connection timeout this client was built with ({@link Builder#connectionTimeout}):
     *     how long to wait for a connection before calling the ensemble unreachable
     */
    public Duration connectionTimeout() {
        return settings.connectionTimeout();
    }

    /** @return the clock this client measures time with */
    public Clock clock() {
        return settings.clock();
    }

    /** @return the connect string this client was built with */
    public String connectString() {
        return settings.connectString();
    }

    /**
     * Adds a listener that sees every later transition once, in order, on a library thread.
     * Whatever it throws is logged; the other listeners are still told.
     *
     * @param listener the listener to add
     * @throws IllegalArgumentException if {@code listener} is null
     * @throws IllegalStateException if the client is closed
     */
    public void addConnectionListener(ConnectionListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener is null");
        }
        ensureOpen();
        lifecycle.addListener(listener);
    }

    /**
     * Removes a listener; does nothing if it was not added.
     *
     * @param listener the listener to remove
     */
    public void removeConnectionListener(ConnectionListener listener) {
        lifecycle.removeListener(listener);
    }

    /**
     * Adds a listener that sees the waits and holds of every recipe made on this client, and its
     * session's later state changes (see {@link CoordinationListener} for what is reported and on
     * which threads). Whatever it throws is logged and ignored. May be added before or after
     * recipes are made; an acquisition already under way when it is added may be reported in part.
     *
     * @param listener the listener to add
     * @throws IllegalArgumentException if {@code listener} is null
     * @throws IllegalStateException if the client is closed
     */
    public void addCoordinationListener(CoordinationListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener is null");
        }
        ensureOpen();
        services.observer().add(listener);
    }

    /**
     * Removes a coordination listener; does nothing if it was not added.
     *
     * @param listener the listener to remove
     */
    public void removeCoordinationListener(CoordinationListener listener) {
        services.observer().remove(listener);
    }

    /** @return true once {@link #close()} has been called */
    public boolean isClosed() {
        return lifecycle.isClosed();
    }

    /**
     * Ends the session, so every ephemeral node and lock of it goes at once, and stops the
     * client's threads. Threads waiting for a lock of this client wake at once and throw {@link
     * IllegalStateException}; pending asynchronous acquisitions fail with it; holds and leases end
     * and their loss listeners run. Listeners see {@link ConnectionState#CLOSED}. While {@link
     * ConnectionState#CONNECTING} it stops the background connection attempts. Returns within
     * about a second whatever the network does: if the ensemble cannot be told (a silent
     * network), the handle is closed in the background and the ensemble expires the session after
     * its timeout. Idempotent.
     */
    @Override
    public void close() {
        lifecycle.close();
    }

    @Override
    public String toString() {
        return lifecycle.name() + "[" + settings.connectString() + ", " + state() + ", " + lifecycle.session() + "]";
    }

    private void ensureOpen() {
        if (lifecycle.isClosed()) {
            throw new IllegalStateException(lifecycle.name() + " is closed");
        }
    }

    /**
     * Settings of a {@link ZkClient}. Every setter validates its argument at once and throws
     * {@link IllegalArgumentException} for a bad one. Not thread-safe; use from one thread.
     */
    public static final class Builder {

        private String connectString;
        private Duration sessionTimeout = Duration.ofSeconds(10);
        private Duration connectionTimeout = Duration.ofSeconds(15);
        private RetryPolicy retryPolicy = RetryPolicy.defaultPolicy();
        private final List<ClientSettings.Auth> auths = new ArrayList<>();
        private List<ACL> acl;
        private Function<String, List<ACL>> aclProvider;
        private ZKClientConfig clientConfig = new ZKClientConfig();
        private Clock clock = Clock.system();
        private boolean createChroot = true;

        private Builder() {
        }

        /**
         * The servers to connect to, and optionally a chroot: a node under which every path of the
         * client lives (a namespace), {@code /app} in {@code zk1:2181,zk2:2181/app}.
         *
         * <p>A chroot that does not exist is created, with its missing parents, before the first
         * session is reported: through a short-lived second connection without the chroot (a
         * client rooted in a node cannot create it), with this builder's {@link #authorization}s
         * and {@link #acl} (so with {@code CREATOR_ALL_ACL} when an authorization is given and no
         * ACL). If it cannot be created (no permission on its parent), {@link #build()} throws
         * {@link CoordinationException} saying so; a client made by {@link #start()} logs it and
         * its recipes fail naming the chroot. A client that only reads ({@link
         * io.zkcoord.inspect.Inspector}, {@code zkcoord inspect}) is built with {@link
         * #createChroot createChroot(false)}: then nothing is created.
         *
         * @param connectString comma-separated {@code host:port} list (IPv6 literals in brackets,
         *     {@code [::1]:2181}; the port defaults to 2181), with an optional chroot suffix
         *     ({@code /app}); required
         * @return this builder
         * @throws IllegalArgumentException if it is null or blank, names no server, or has an
         *     empty host, a port that is not a number from 1 to 65535, or a chroot that is not a
         *     valid ZooKeeper path; the message says which
         */
        public Builder connectString(String connectString) {
            this.connectString = ConnectString.parse(connectString).text();
            return this;
        }

        /**
         * Whether a chroot of the {@link #connectString} that does not exist is created before the
         * first session (the default, true), or left as it is (false).
         *
         * <p>With false the client writes nothing of its own, as a client that only reads must
         * not: a mistyped chroot ({@code zk1:2181/nope}) is not created on the ensemble. The
         * client still connects; every path under a missing chroot reads as missing (an {@link
         * io.zkcoord.inspect.Inspector} snapshot with {@code exists()} false), and a recipe that
         * needs to create a node under it fails with {@link CoordinationException} naming the
         * chroot. Without a chroot this setting changes nothing.
         *
         * @param createChroot false to leave a missing chroot missing
         * @return this builder
         */
        public Builder createChroot(boolean createChroot) {
            this.createChroot = createChroot;
            return this;
        }

        /**
         * @param sessionTimeout the session timeout to ask for; the ensemble may negotiate another
         *     within its own bounds. Default 10 s.
         * @return this builder
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = positive(sessionTimeout, "sessionTimeout");
            return this;
        }

        /**
         * @param connectionTimeout how long {@link #build()} waits for the first session. Default
         *     15 s. Not used by {@link #start()}, which does not wait. The Spring and ShedLock
         *     modules wait this long at most for a connection before they call the ensemble
         *     unreachable ({@link ZkClient#connectionTimeout()}).
         * @return this builder
         */
        public Builder connectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = positive(connectionTimeout, "connectionTimeout");
            return this;
        }

        /**
         * @param retryPolicy the policy for every operation. Default {@link RetryPolicy#defaultPolicy()}.
         * @return this builder
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            if (retryPolicy == null) {
                throw new IllegalArgumentException("retryPolicy must not be null");
            }
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * Adds an authentication to every session, e.g. {@code ("digest", "user:secret".getBytes())}.
         * Unless {@link #acl} is set, nodes are then created with {@code CREATOR_ALL_ACL}.
         *
         * @param scheme the authentication scheme, e.g. {@code digest}
         * @param credentials the scheme's credentials
         * @return this builder
         */
        public Builder authorization(String scheme, byte[] credentials) {
            if (scheme == null || scheme.isBlank() || credentials == null) {
                throw new IllegalArgumentException("authorization needs a scheme and credentials");
            }
            auths.add(new ClientSettings.Auth(scheme, credentials.clone()));
            return this;
        }

        /**
         * @param acl the ACL of every node the recipes create. Default {@code OPEN_ACL_UNSAFE}, or
         *     {@code CREATOR_ALL_ACL} when an authorization is given. The one-ACL shortcut of
         *     {@link #aclProvider}.
         * @return this builder
         * @throws IllegalArgumentException if {@code acl} is null, empty or holds a null, or an
         *     {@link #aclProvider} was set
         */
        public Builder acl(List<ACL> acl) {
            // Not acl.contains(null): immutable lists (List.of) throw NullPointerException on it.
            if (acl == null || acl.isEmpty() || acl.stream().anyMatch(Objects::isNull)) {
                throw new IllegalArgumentException("acl must be a non-empty list without nulls");
            }
            if (aclProvider != null) {
                throw new IllegalArgumentException("acl and aclProvider are exclusive: an aclProvider is already set");
            }
            this.acl = aclList(acl);
            return this;
        }

        /**
         * Gives each node the recipes create an ACL of its own, by path: the lock, semaphore and
         * election directories, their missing parents, and every queue node (a lock's holders and
         * waiters, a semaphore's leases, an election's participants). A directory and each missing
         * parent are asked for with their own path ({@code /locks}, {@code /locks/orders}); a queue
         * node with the path its {@code create} names, which is its directory, {@code /}, and the
         * node's name up to the sequence number ZooKeeper appends ({@code
         * /locks/orders/lock-9f2c...-}). Paths are as the client names them: a chroot of the
         * connect string is not part of them. Say {@code path -> path.startsWith("/locks/billing")
         * ? billingAcl : ZooDefs.Ids.CREATOR_ALL_ACL}.
         *
         * <p>The provider is called for every create, on library and ZooKeeper threads, possibly
         * concurrently: it must be quick, thread-safe and must not block. An answer that is null,
         * empty or holds a null fails the acquisition that asked ({@code CoordinationException},
         * no node left); so does whatever it throws.
         *
         * @param aclForPath the ACL of a node by its path
         * @return this builder
         * @throws IllegalArgumentException if {@code aclForPath} is null, or {@link #acl} was set
         */
        public Builder aclProvider(Function<String, List<ACL>> aclForPath) {
            if (aclForPath == null) {
                throw new IllegalArgumentException("aclProvider must not be null");
            }
            if (acl != null) {
                throw new IllegalArgumentException("acl and aclProvider are exclusive: an acl is already set");
            }
            this.aclProvider = aclForPath;
            return this;
        }

        /**
         * @param clientConfig ZooKeeper client settings (TLS, SASL, ...). Default: a new {@link ZKClientConfig}.
         * @return this builder
         */
        public Builder clientConfig(ZKClientConfig clientConfig) {
            if (clientConfig == null) {
                throw new IllegalArgumentException("clientConfig must not be null");
            }
            this.clientConfig = clientConfig;
            return this;
        }

        /**
         * @param clock the clock for session-loss detection and retry delays. Default {@link
         *     Clock#system()}; tests inject their own.
         * @return this builder
         */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * Connects and waits for the first session.
         *
         * @return a connected client, in state {@link ConnectionState#CONNECTED}
         * @throws IllegalArgumentException if no connect string was given
         * @throws ConnectFailedException if no session is established within the connection
         *     timeout (given or taken a few milliseconds, whatever the network does); its {@link
         *     ConnectFailedException#problem()} and message say why: a host name that does not
         *     resolve, connection refused, a timeout, or a setting the server cannot grant. The
         *     attempt's threads and sockets are stopped in the background, within about a second.
         * @throws CoordinationException if the connect string's chroot is missing and cannot be
         *     created (see {@link #connectString}), or if interrupted (the flag is set again)
         */
        public ZkClient build() {
            ZkClient client = new ZkClient(settings());
            client.lifecycle.start();
            return client;
        }

        /**
         * Builds the client and returns at once, without waiting for a session; it connects in the
         * background, retrying until {@link ZkClient#close()}.
         *
         * <p>The client is in state {@link ConnectionState#CONNECTING} until the first session is
         * established; {@link ConnectionListener}s then hear {@link ConnectionState#CONNECTED}, as
         * after {@link #build()}. Meanwhile {@link ZkClient#isClosed()} is false, {@link
         * ZkClient#sessionId()} is 0, and everything that needs a session waits for it under its
         * own time limit: {@code tryLock(time)} returns false by its deadline, {@code lock()} and
         * {@code acquire()} wait as long as the retry policy allows (as after a {@link
         * ConnectionState#LOST}), an election joins once connected, {@link ZkClient#session(Duration)}
         * waits at most its {@code maxWait}. ZooKeeper's client tries the servers in turn, about
         * once a second, whatever the connection timeout. {@link ZkClient#close()} during {@code
         * CONNECTING} returns promptly and leaves no thread running.
         *
         * <p><b>TLS that cannot work.</b> A TLS client ({@code zookeeper.client.secure}) that has
         * no session after 500 ms (or a quarter of the connection timeout, if shorter), here or
         * after any {@link ConnectionState#LOST}, probes each server's TLS as {@link #build()}
         * does, and again every 2 s while there is still no session. When every server refuses in a way that retrying cannot change (an untrusted
         * server certificate, a certificate for another host, a refused client certificate, a
         * plain-text port), the refusal is logged once at ERROR (naming the settings, never their
         * values), and every acquisition waiting for a session, and every one started while the
         * refusal lasts, fails at once with {@link TlsConnectException} naming the cause, instead
         * of waiting to its deadline; {@link ZkClient#session()} and {@link
         * ZkClient#session(Duration)} throw it too. The client keeps trying all along: once a
         * session comes (the certificate or trust store fixed, say), the recipes work again. Work
         * that waits for any next session on its own (a group member joining again, an election
         * or shard member trying again) is not ended by it.
         *
         * @return a client, connecting
         * @throws IllegalArgumentException if no connect string was given
         */
        public ZkClient start() {
            ZkClient client = new ZkClient(settings());
            client.lifecycle.startInBackground();
            return client;
        }

        private ClientSettings settings() {
            if (connectString == null) {
                throw new IllegalArgumentException("connectString is required");
            }
            // The default ACL is decided per build, not stored here: an authorization added before a
            // later build() must still switch that client's default to CREATOR_ALL_ACL.
            List<ACL> nodeAcl = acl != null ? acl
                    : aclList(auths.isEmpty() ? ZooDefs.Ids.OPEN_ACL_UNSAFE : ZooDefs.Ids.CREATOR_ALL_ACL);
            return new ClientSettings(connectString, sessionTimeout, connectionTimeout, retryPolicy,
                    List.copyOf(auths), nodeAcl, clientConfig, clock, aclProvider, createChroot);
        }

        /**
         * An unmodifiable copy that ZooKeeper accepts: its {@code create} checks {@code
         * acl.contains(null)}, which throws on {@code List.of}/{@code List.copyOf} lists. A copy,
         * too, so callers of {@link ZkClient#acl()} cannot alter the shared {@code ZooDefs.Ids}
         * lists.
         */
        private static List<ACL> aclList(List<ACL> acl) {
            return Collections.unmodifiableList(new ArrayList<>(acl));
        }

        private static Duration positive(Duration d, String name) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }
    }
}
