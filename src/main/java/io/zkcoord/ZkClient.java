package io.zkcoord;

import io.zkcoord.retry.RetryLoop;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.retry.ZkCall;
import io.zkcoord.time.Clock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <h2>Session loss</h2>
 * The raw ZooKeeper client learns that its session expired only when it reaches a server again.
 * During a partition a lock holder would go on believing it holds its locks long after the
 * ensemble handed them to someone else. This client therefore declares {@link
 * ConnectionState#LOST} by itself once no server has been reached for the whole negotiated session
 * timeout, counted from the moment the disconnection was seen. Either way, after {@code LOST} it
 * closes the dead handle and builds a new session on its own, retrying until it connects or is
 * closed; {@link #zooKeeper()} then returns the new handle.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe. State changes are made on one library thread, which also runs the {@link
 * ConnectionListener}s, in order; {@link #state()} and {@link #zooKeeper()} read volatile fields.
 */
public final class ZkClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkClient.class);
    private static final AtomicInteger CLIENT_IDS = new AtomicInteger();
    private static final long TICK_MILLIS = 50;
    private static final int CLOSE_WAIT_MILLIS = 5_000;
    /** A failed authentication fails again at once: retry it at this pace, not in a tight loop. */
    private static final Duration AUTH_FAILED_REBUILD_DELAY = Duration.ofSeconds(1);

    private final Builder config;
    private final RetryLoop retryLoop;
    private final Clock clock;
    private final String name;
    /** Runs every state change and every listener call, in order. */
    private final ScheduledExecutorService events;
    /** Runs {@link ZkSession#callEventually} clean-up work. */
    private final ThreadPoolExecutor background;
    private final List<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object sessionChange = new Object();

    /** Written on the events thread only. */
    private volatile ConnectionState state;
    /** The handle in use: the only one whose events count. Written on the events thread only. */
    private volatile Handle current;
    /** The latest established session; written on the events thread only. */
    private volatile ZkSession session;
    /** When the disconnection now in force was seen, by {@link #clock}. Events thread only. */
    private long disconnectedAt;
    /** Events thread only. */
    private int rebuildAttempts;

    private ZkClient(Builder config) {
        this.config = config;
        this.clock = config.clock;
        this.retryLoop = new RetryLoop(config.retryPolicy, config.clock);
        this.name = "zkcoord-" + CLIENT_IDS.incrementAndGet();
        ScheduledThreadPoolExecutor eventsExecutor = new ScheduledThreadPoolExecutor(1, daemon(name + "-events"));
        // After shutdown() the tasks already queued (the CLOSED transition) still run, but no
        // periodic check and no delayed rebuild keeps the thread alive.
        eventsExecutor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        eventsExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.events = eventsExecutor;
        this.background = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemon(name + "-background"));
    }

    /** @return a builder with the defaults documented on each of its methods */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The live handle of the current session. After {@link ConnectionState#LOST} this is a new
     * handle; do not keep it across a loss.
     *
     * @throws IllegalStateException if the client is closed
     */
    public ZooKeeper zooKeeper() {
        ensureOpen();
        return current.zooKeeper;
    }

    /**
     * @return the id of the latest established session (0 never: {@link Builder#build()} returns
     *     only with one)
     * @throws IllegalStateException if the client is closed
     */
    public long sessionId() {
        ensureOpen();
        return session.id();
    }

    /**
     * Returns the current session, waiting for one to be established (after a {@link
     * ConnectionState#LOST}) as long as the retry policy allows.
     *
     * @throws IllegalStateException if the client is closed, also while waiting
     * @throws CoordinationException if no session is established within the retry policy
     * @throws InterruptedException if interrupted while waiting
     */
    public ZkSession session() throws InterruptedException {
        return awaitSession(Long.MAX_VALUE).orElseThrow();
    }

    /**
     * Returns the current session, waiting at most {@code maxWait} for one to be established
     * (after a {@link ConnectionState#LOST}), and no longer than the retry policy allows. For
     * callers with a deadline of their own, such as a timed {@code tryLock}.
     *
     * @param maxWait how long to wait at most; zero means do not wait
     * @return the session, or empty if none was established within {@code maxWait}
     * @throws IllegalArgumentException if {@code maxWait} is null or negative
     * @throws IllegalStateException if the client is closed, also while waiting
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
        long start = clock.nanoTime();
        for (int retries = 0; ; retries++) {
            ensureOpen();
            ZkSession s = session;
            if (s.isAlive()) {
                return Optional.of(s);
            }
            long elapsedNanos = clock.nanoTime() - start;
            if (elapsedNanos >= maxWaitNanos) {
                return Optional.empty();
            }
            Duration elapsed = Duration.ofNanos(elapsedNanos);
            Optional<Duration> delay = config.retryPolicy.retryDelay(retries, elapsed);
            if (delay.isEmpty()) {
                throw new CoordinationException("no ZooKeeper session at " + config.connectString + " after "
                        + elapsed.toMillis() + " ms under " + config.retryPolicy + "; state " + state);
            }
            long waitNanos = Math.min(delay.get().toNanos(), maxWaitNanos - elapsedNanos);
            synchronized (sessionChange) {
                if (session == s && !closed.get()) {
                    sessionChange.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
                }
            }
        }
    }

    /**
     * Runs {@code call} under the client's retry policy on whatever session is current at each
     * try. For calls that do not depend on one session (reading shared data, creating persistent
     * nodes); calls tied to a session use {@link ZkSession#call}. A session expiry during the call
     * is therefore passing, like a connection loss: the next try goes to the new session.
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
        return retryLoop.runOnAnySession(path, this::zooKeeper, call);
    }

    /**
     * @return the current state; {@link ConnectionState#CLOSED} as soon as {@link #close()} has
     *     been called, even before the listeners have been told
     */
    public ConnectionState state() {
        return closed.get() ? ConnectionState.CLOSED : state;
    }

    /** @return the ACL given to every node the recipes create */
    public List<ACL> acl() {
        return config.acl;
    }

    /** @return the retry policy for operations of this client */
    public RetryPolicy retryPolicy() {
        return config.retryPolicy;
    }

    /** @return the clock this client measures time with */
    public Clock clock() {
        return clock;
    }

    /** @return the connect string this client was built with */
    public String connectString() {
        return config.connectString;
    }

    /**
     * Adds a listener that sees every later transition once, in order, on a library thread.
     *
     * @throws IllegalArgumentException if {@code listener} is null
     * @throws IllegalStateException if the client is closed
     */
    public void addConnectionListener(ConnectionListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener is null");
        }
        ensureOpen();
        listeners.add(listener);
    }

    /** Removes a listener; does nothing if it was not added. */
    public void removeConnectionListener(ConnectionListener listener) {
        listeners.remove(listener);
    }

    /** @return true once {@link #close()} has been called */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Ends the session, so every ephemeral node and lock of it goes at once, and stops the
     * client's threads. Threads waiting for a lock of this client wake and throw {@link
     * IllegalStateException}; holds end and their loss listeners run. Listeners see {@link
     * ConnectionState#CLOSED}. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        log.info("{}: closing", name);
        endCurrentSession();
        // Called by a listener, on the events thread: CLOSED is queued behind the transition being
        // delivered now, so it cannot be waited for here; shutdown() (not shutdownNow()) below
        // lets it run once this listener returns, after the other listeners saw this transition.
        boolean onEventsThread = Thread.currentThread().getName().equals(name + "-events");
        boolean delivered = onEventsThread;
        boolean interrupted = false;
        CompletableFuture<Void> done = null;
        try {
            // On the events thread, so that a session established just before close() was called
            // (published after the line above read the old one) is ended too, before CLOSED.
            done = CompletableFuture.runAsync(() -> {
                endCurrentSession();
                transition(ConnectionState.CLOSED);
            }, events);
        } catch (RejectedExecutionException e) {
            log.warn("{}: CLOSED not delivered: the events thread has stopped", name);
        }
        if (done != null && !onEventsThread) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
            for (;;) {
                try {
                    done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    delivered = true;
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // finish closing first; the flag is set again below
                } catch (ExecutionException | TimeoutException e) {
                    log.warn("{}: CLOSED not delivered to every listener", name, e);
                    break;
                }
            }
        }
        try {
            current.zooKeeper.close(CLOSE_WAIT_MILLIS);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (delivered) {
            events.shutdown();
        } else {
            events.shutdownNow(); // a listener is stuck: interrupt it rather than leak the thread
        }
        background.shutdownNow();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the latest session, if still alive, and wakes threads waiting for a session. */
    private void endCurrentSession() {
        ZkSession s = session;
        if (s != null) {
            s.end();
        }
        synchronized (sessionChange) {
            sessionChange.notifyAll();
        }
    }

    @Override
    public String toString() {
        return name + "[" + config.connectString + ", " + state + ", " + session + "]";
    }

    // ---------------------------------------------------------------- connecting

    private void start() {
        CompletableFuture<Void> first = new CompletableFuture<>();
        listeners.add(state -> {
            if (state == ConnectionState.CONNECTED) {
                first.complete(null);
            }
        });
        try {
            events.submit(() -> {
                try {
                    current = new Handle();
                } catch (IOException | RuntimeException e) {
                    first.completeExceptionally(e);
                }
                return null;
            }).get();
            events.scheduleWithFixedDelay(this::checkPresumedLoss, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
            first.get(config.connectionTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            abandonStart();
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while connecting to " + config.connectString, e);
        } catch (ExecutionException | TimeoutException e) {
            abandonStart();
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new CoordinationException("no ZooKeeper session at " + config.connectString + " within "
                    + config.connectionTimeout.toMillis() + " ms", cause);
        } finally {
            listeners.clear();
        }
    }

    private void abandonStart() {
        closed.set(true);
        Handle h = current;
        if (h != null) {
            try {
                h.zooKeeper.close(CLOSE_WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        events.shutdownNow();
        background.shutdownNow();
        try {
            events.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Events thread. The state machine: one ZooKeeper event of one handle. */
    private void onEvent(Handle h, WatchedEvent event) {
        if (h != current || closed.get() || event.getType() != Watcher.Event.EventType.None) {
            return;
        }
        switch (event.getState()) {
            case SyncConnected:
                if (h.session == null) {
                    h.session = new ZkSession(h.zooKeeper, retryLoop, background);
                    rebuildAttempts = 0;
                    synchronized (sessionChange) {
                        session = h.session;
                        sessionChange.notifyAll();
                    }
                    log.info("{}: session 0x{} established, timeout {} ms", name,
                            Long.toHexString(h.session.id()), h.session.timeoutMillis());
                    transition(state == null ? ConnectionState.CONNECTED : ConnectionState.RECONNECTED);
                } else if (state == ConnectionState.SUSPENDED) {
                    transition(ConnectionState.RECONNECTED);
                }
                break;
            case Disconnected:
                if (state != null && state.isConnected()) {
                    disconnectedAt = clock.nanoTime();
                    transition(ConnectionState.SUSPENDED);
                }
                break;
            case Expired:
                loseSession(h, "ZooKeeper reported the session expired", Duration.ZERO);
                break;
            case AuthFailed:
                // The handle stops for good without an Expired: the session cannot be used.
                loseSession(h, "authentication failed (check the authorization given to the builder)",
                        AUTH_FAILED_REBUILD_DELAY);
                break;
            case Closed:
                // Our own closes are filtered out above (old handles, or closed set first): this
                // handle stopped by itself, so its session can no longer be trusted.
                loseSession(h, "the ZooKeeper handle closed itself", Duration.ZERO);
                break;
            default:
                break;
        }
    }

    /** Events thread, every tick: declares LOST once disconnected for the session timeout. */
    private void checkPresumedLoss() {
        Handle h = current;
        if (state != ConnectionState.SUSPENDED || h == null || h.session == null || closed.get()) {
            return;
        }
        long silentNanos = clock.nanoTime() - disconnectedAt;
        if (silentNanos >= TimeUnit.MILLISECONDS.toNanos(h.session.timeoutMillis())) {
            loseSession(h, "presumed expired: no server reached for " + TimeUnit.NANOSECONDS.toMillis(silentNanos)
                    + " ms, the session timeout is " + h.session.timeoutMillis() + " ms", Duration.ZERO);
        }
    }

    /**
     * Events thread. Ends the session of {@code h}, reports LOST and starts a new session after
     * {@code rebuildDelay}. Once per handle.
     */
    private void loseSession(Handle h, String why, Duration rebuildDelay) {
        if (h.lost) {
            return;
        }
        h.lost = true;
        log.warn("{}: session 0x{} lost: {}", name, h.session == null ? "?" : Long.toHexString(h.session.id()), why);
        if (h.session != null) {
            h.session.end();
        }
        synchronized (sessionChange) {
            sessionChange.notifyAll();
        }
        transition(ConnectionState.LOST);
        closeQuietlyInBackground(h.zooKeeper);
        if (rebuildDelay.isZero()) {
            rebuild();
        } else {
            events.schedule(this::rebuild, rebuildDelay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Events thread. Makes a new handle; on failure tries again after the policy's delay. */
    private void rebuild() {
        if (closed.get()) {
            return;
        }
        try {
            current = new Handle();
        } catch (IOException | RuntimeException e) {
            Duration delay = config.retryPolicy.retryDelay(rebuildAttempts++, Duration.ZERO)
                    .orElseGet(() -> {
                        rebuildAttempts = 0;
                        return Duration.ofSeconds(1);
                    });
            log.warn("{}: cannot start a new session, next try in {} ms", name, delay.toMillis(), e);
            events.schedule(this::rebuild, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Events thread. */
    private void transition(ConnectionState next) {
        state = next;
        log.info("{}: {}", name, next);
        for (ConnectionListener l : listeners) {
            try {
                l.stateChanged(next);
            } catch (RuntimeException e) {
                log.error("{}: connection listener {} failed on {}", name, l, next, e);
            }
        }
    }

    private void closeQuietlyInBackground(ZooKeeper zk) {
        Thread t = new Thread(() -> {
            try {
                zk.close(CLOSE_WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name + "-close-old-session");
        t.setDaemon(true);
        t.start();
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    private static ThreadFactory daemon(String threadName) {
        return r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        };
    }

    /** One raw ZooKeeper handle and the session it established, if any. */
    private final class Handle implements Watcher {
        final ZooKeeper zooKeeper;
        /** Set on the events thread when this handle first connects. */
        ZkSession session;
        /** Set on the events thread once this handle's session was reported lost. */
        boolean lost;

        Handle() throws IOException {
            zooKeeper = new ZooKeeper(config.connectString, (int) config.sessionTimeout.toMillis(), this, false,
                    config.clientConfig);
            for (Builder.Auth auth : config.auths) {
                zooKeeper.addAuthInfo(auth.scheme(), auth.credentials());
            }
        }

        @Override
        public void process(WatchedEvent event) {
            try {
                events.execute(() -> onEvent(this, event));
            } catch (RejectedExecutionException closing) {
                // the client is closing: no state change matters any more
            }
        }
    }

    /**
     * Settings of a {@link ZkClient}. Every setter validates its argument at once and throws
     * {@link IllegalArgumentException} for a bad one. Not thread-safe; use from one thread.
     */
    public static final class Builder {

        /** An authentication to add to every session. */
        record Auth(String scheme, byte[] credentials) {
        }

        private String connectString;
        private Duration sessionTimeout = Duration.ofSeconds(10);
        private Duration connectionTimeout = Duration.ofSeconds(15);
        private RetryPolicy retryPolicy = RetryPolicy.defaultPolicy();
        private final List<Auth> auths = new ArrayList<>();
        private List<ACL> acl;
        private ZKClientConfig clientConfig = new ZKClientConfig();
        private Clock clock = Clock.system();

        private Builder() {
        }

        /**
         * @param connectString comma-separated {@code host:port} list, with an optional chroot
         *     suffix; required
         */
        public Builder connectString(String connectString) {
            if (connectString == null || connectString.isBlank()) {
                throw new IllegalArgumentException("connectString must not be null or empty");
            }
            this.connectString = connectString;
            return this;
        }

        /**
         * @param sessionTimeout the session timeout to ask for; the ensemble may negotiate another
         *     within its own bounds. Default 10 s.
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = positive(sessionTimeout, "sessionTimeout");
            return this;
        }

        /** @param connectionTimeout how long {@link #build()} waits for the first session. Default 15 s. */
        public Builder connectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = positive(connectionTimeout, "connectionTimeout");
            return this;
        }

        /** @param retryPolicy the policy for every operation. Default {@link RetryPolicy#defaultPolicy()}. */
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
         */
        public Builder authorization(String scheme, byte[] credentials) {
            if (scheme == null || scheme.isBlank() || credentials == null) {
                throw new IllegalArgumentException("authorization needs a scheme and credentials");
            }
            auths.add(new Auth(scheme, credentials.clone()));
            return this;
        }

        /**
         * @param acl the ACL of every node the recipes create. Default {@code OPEN_ACL_UNSAFE}, or
         *     {@code CREATOR_ALL_ACL} when an authorization is given.
         */
        public Builder acl(List<ACL> acl) {
            // Not acl.contains(null): immutable lists (List.of) throw NullPointerException on it.
            if (acl == null || acl.isEmpty() || acl.stream().anyMatch(Objects::isNull)) {
                throw new IllegalArgumentException("acl must be a non-empty list without nulls");
            }
            this.acl = aclList(acl);
            return this;
        }

        /** @param clientConfig ZooKeeper client settings (TLS, SASL, ...). Default: a new {@link ZKClientConfig}. */
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
         * @throws CoordinationException if no session is established within the connection
         *     timeout; no thread or socket of the attempt is left behind
         */
        public ZkClient build() {
            if (connectString == null) {
                throw new IllegalArgumentException("connectString is required");
            }
            Builder snapshot = copy();
            if (snapshot.acl == null) {
                // Decided per build, not stored here: an authorization added before a later
                // build() must still switch that client's default to CREATOR_ALL_ACL.
                snapshot.acl = aclList(auths.isEmpty() ? ZooDefs.Ids.OPEN_ACL_UNSAFE : ZooDefs.Ids.CREATOR_ALL_ACL);
            }
            ZkClient client = new ZkClient(snapshot);
            client.start();
            return client;
        }

        private Builder copy() {
            Builder b = new Builder();
            b.connectString = connectString;
            b.sessionTimeout = sessionTimeout;
            b.connectionTimeout = connectionTimeout;
            b.retryPolicy = retryPolicy;
            b.auths.addAll(auths);
            b.acl = acl;
            b.clientConfig = clientConfig;
            b.clock = clock;
            return b;
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
