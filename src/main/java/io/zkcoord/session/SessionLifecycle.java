package io.zkcoord.session;

import io.zkcoord.ConnectFailedException;
import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.TlsConnectException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.retry.RetryLoop;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session lifecycle of one {@link ZkClient}, as one state machine:
 *
 * <pre>
 *   CONNECTING --SyncConnected--> CONNECTED
 *   CONNECTING --handle failed before any session--> CONNECTING (a new handle; nothing reported)
 *   CONNECTED | RECONNECTED --Disconnected--> SUSPENDED
 *   SUSPENDED --SyncConnected, same session--> RECONNECTED
 *   SUSPENDED --no server for the session timeout (presumed)--> LOST
 *   any --Expired | AuthFailed | handle closed itself--> LOST
 *   LOST --(old handle closed, new handle built)-- SyncConnected, new session--> RECONNECTED
 *   any --close()--> CLOSED
 * </pre>
 *
 * Every transition runs on the one {@code zkcoord-N-events} thread, which also tells the {@link
 * ConnectionListener}s, in order. Whatever a listener or a session-end hook throws (any {@link
 * Throwable}) is logged and the transition goes on: every listener is told, the session is ended,
 * the dead handle closed and a new session built.
 *
 * <p>This class holds the states and transitions. Connecting the first time and saying why no
 * session came is {@link FirstConnection}'s (connecting and probing); a new handle after a loss,
 * and the end on the ensemble of a session presumed lost, {@link Rebuilder}'s (rebuilding); one
 * raw ZooKeeper handle is a {@link Handle}.
 *
 * <p>Thread-safe: state is written on the events thread only and read through volatile fields.
 * Public only for {@link ZkClient}, in another package; not API.
 */
public final class SessionLifecycle {

    private static final Logger log = LoggerFactory.getLogger(SessionLifecycle.class);
    private static final long TICK_MILLIS = 50;
    /** How long {@link #close()} waits at most for CLOSED to be delivered and the handle to close. */
    private static final long CLOSE_BUDGET_MILLIS = 900;
    /** A failed authentication fails again at once: retry it at this pace, not in a tight loop. */
    private static final Duration AUTH_FAILED_REBUILD_DELAY = Duration.ofSeconds(1);

    private final ClientSettings settings;
    private final RetryLoop retryLoop;
    private final String name;
    /** Runs every state change, every connection-listener call and the recipes' delayed steps. */
    private final ScheduledExecutorService events;
    /** Runs user code the recipes hand over: future completions, loss listeners; threads on demand. */
    private final ThreadPoolExecutor callbacks;
    private final List<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** A new handle after a loss, and the end on the ensemble of sessions presumed lost. */
    private final Rebuilder rebuilder;

    /** Written on the events thread only. */
    private volatile ConnectionState state = ConnectionState.CONNECTING;
    /** The handle in use: the only one whose events count. Written on the events thread only. */
    private volatile Handle current;
    /** The latest established session; written on the events thread only. */
    private volatile ZkSession session;
    /**
     * Completed with the next live session; replaced (on the events thread) when a session is
     * lost; completed exceptionally when the client closes.
     */
    private volatile CompletableFuture<ZkSession> nextSession = new CompletableFuture<>();
    /**
     * As {@link #nextSession}, but failed at once with the {@link TlsConnectException} while the
     * {@link TlsWatch} finds that every server refuses this client's TLS for good. Replaced (events
     * thread) when a later probe no longer finds that, when a session comes (by {@link
     * #nextSession}, if a refusal had failed it), and when a session is lost.
     */
    private volatile CompletableFuture<ZkSession> nextUnlessRefused = new CompletableFuture<>();
    /** Probes the servers' TLS while there is no session; events thread only. */
    private final TlsWatch tlsWatch;
    /** When the disconnection now in force was seen, by the clock. Events thread only. */
    private long disconnectedAt;
    /** Set once the connect string's chroot is known to exist (or there is none). Events thread only. */
    private boolean chrootExists;
    /**
     * What {@link #start()} waits for while it waits, null otherwise; failed early when the chroot
     * cannot be created, or by a refused authentication or TLS.
     */
    private volatile CompletableFuture<Void> firstSession;
    /** While {@link #start()} waits: completed by the first handle's SASL login answer. */
    private volatile CompletableFuture<Void> firstSaslLogin;
    /** Why the latest handle without a session stopped (a failed authentication), or null. */
    private volatile String connectProblem;

    public SessionLifecycle(ClientSettings settings, String name) {
        this.settings = settings;
        this.name = name;
        this.retryLoop = new RetryLoop(settings.retryPolicy(), settings.clock());
        ScheduledThreadPoolExecutor eventsExecutor = new ScheduledThreadPoolExecutor(1, daemon(name + "-events"));
        // After shutdown() the tasks already queued (the CLOSED transition) still run, but no
        // periodic check and no delayed step keeps the thread alive.
        eventsExecutor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        eventsExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        eventsExecutor.setRemoveOnCancelPolicy(true);
        this.events = eventsExecutor;
        // Threads on demand, each ending after 10 s idle: usually one, but a dependent that blocks
        // (say, joins another acquisition of this client) cannot hold up the others or a loss notice.
        this.callbacks = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(),
                numbered(name + "-callbacks-"));
        this.tlsWatch = new TlsWatch(settings, name, events, this::withoutSession, this::tlsVerdict);
        this.rebuilder = new Rebuilder(this, settings, name);
    }

    public String name() {
        return name;
    }

    public ScheduledExecutorService scheduler() {
        return events;
    }

    /**
     * Runs user code off every ZooKeeper and state-machine thread, on the callback thread. Once
     * the client is closed and that thread has stopped, runs it on the calling thread instead: a
     * future must still complete (say, with the client's closing) when nobody else is left to do it.
     * Whatever the code throws is logged.
     */
    public void runCallback(Runnable task) {
        Runnable guarded = () -> {
            try {
                task.run();
            } catch (Throwable t) {
                log.error("{}: a callback failed", name, t);
            }
        };
        try {
            callbacks.execute(guarded);
        } catch (RejectedExecutionException e) {
            guarded.run();
        }
    }

    public ConnectionState state() {
        return closed.get() ? ConnectionState.CLOSED : state;
    }

    public boolean isClosed() {
        return closed.get();
    }

    public ZkSession session() {
        return session;
    }

    public ZooKeeper zooKeeper() {
        return current.zooKeeper;
    }

    public RetryLoop retryLoop() {
        return retryLoop;
    }

    /** @return the live session now, or a future of the next one; failed once closed */
    public CompletableFuture<ZkSession> liveSession() {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException(name + " is closed"));
        }
        ZkSession s = session;
        if (s != null && s.isAlive()) {
            return CompletableFuture.completedFuture(s);
        }
        return nextSession;
    }

    /**
     * As {@link #liveSession()}, for waits that must end at once while every server refuses this
     * client's TLS for good: the future then fails with the {@link TlsConnectException} (see
     * {@link TlsWatch}), at once for callers that come while it lasts.
     *
     * @return the live session now, or a future of the next one; failed once closed, or while TLS is refused
     */
    public CompletableFuture<ZkSession> liveSessionUnlessRefused() {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException(name + " is closed"));
        }
        ZkSession s = session;
        if (s != null && s.isAlive()) {
            return CompletableFuture.completedFuture(s);
        }
        return nextUnlessRefused;
    }

    /** @return true while the client has no live session and is not closed */
    private boolean withoutSession() {
        ZkSession s = session;
        return !closed.get() && (s == null || !s.isAlive());
    }

    /**
     * Events thread. What the {@link TlsWatch} found while there is no session: a refusal fails
     * the waits for a session that must end at once (and those that come while it lasts); its end
     * lets them wait again.
     */
    private void tlsVerdict(Optional<TlsConnectException> refused) {
        if (!withoutSession()) {
            return;
        }
        CompletableFuture<ZkSession> waiting = nextUnlessRefused;
        if (refused.isPresent()) {
            if (!waiting.completeExceptionally(refused.get())) {
                nextUnlessRefused = CompletableFuture.failedFuture(refused.get()); // the latest reason
            }
        } else if (waiting.isCompletedExceptionally()) {
            nextUnlessRefused = new CompletableFuture<>();
        }
    }

    public void addListener(ConnectionListener listener) {
        listeners.add(listener);
    }

    public void removeListener(ConnectionListener listener) {
        listeners.remove(listener);
    }

    // ---------------------------------------------------------------- start

    /**
     * Makes the first handle and starts the periodic checks, then returns: the session comes
     * later. If the handle cannot be made, tries again after the retry policy's delay, as after a
     * loss.
     */
    public void startInBackground() {
        try {
            events.submit(() -> {
                try {
                    current = newHandle();
                } catch (IOException | RuntimeException e) {
                    log.warn("{}: cannot start connecting to {}; trying again", name, settings.connectString(), e);
                    rebuilder.rebuildAfter(AUTH_FAILED_REBUILD_DELAY);
                }
                tlsWatch.noSession();
            }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException(name + ": cannot start", e.getCause());
        }
        startChecks();
    }

    /**
     * Connects and waits for the first session, at most the connection timeout (give or take a
     * few milliseconds) whatever the network does; on failure leaves no thread behind for long.
     * Halfway through the wait, if there is no session yet, each server is probed ({@link
     * ConnectProbe}) so that the failure can say why ({@link FirstConnection}).
     *
     * @throws ConnectFailedException if no session came within the connection timeout
     * @throws CoordinationException if the handle could not be made, or if interrupted (the
     *     interrupt flag is then set again)
     */
    public void start() {
        new FirstConnection(this, settings, name).await();
    }

    /** Sets (or, with nulls, clears) what {@link #start()} waits for: the first session, and its SASL login. */
    void awaitingFirstSession(CompletableFuture<Void> first, CompletableFuture<Void> saslLogin) {
        firstSession = first;
        firstSaslLogin = saslLogin;
    }

    /**
     * Makes the first handle on the events thread and waits for that.
     *
     * @param onFailure told why, if it cannot be made
     */
    void openFirstHandle(Consumer<Exception> onFailure) throws InterruptedException, ExecutionException {
        events.submit(() -> {
            try {
                current = newHandle();
            } catch (IOException | RuntimeException e) {
                onFailure.accept(e);
            }
            return null;
        }).get();
    }

    /** Starts the periodic check for a session presumed lost. */
    void startChecks() {
        events.scheduleWithFixedDelay(this::checkPresumedLoss, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** @return why the latest handle without a session stopped (a failed authentication), or null */
    String connectProblem() {
        return connectProblem;
    }

    /** @return a new handle whose events come to this state machine */
    Handle newHandle() throws IOException {
        return new Handle(settings, events, this::onEvent);
    }

    /** Events thread. {@code h} is the handle in use from now on: only its events count. */
    void use(Handle h) {
        current = h;
    }

    /**
     * Gives up the first connection without waiting for anything: the handle never had a session
     * that ZooKeeper told us of, so there is none to close on the ensemble, and a polite close
     * would wait for the connection attempt in progress (up to the session timeout against a
     * server that accepts connections and never answers).
     */
    void abandonStart() {
        closed.set(true);
        Handle h = current;
        if (h != null) {
            closeInBackground(h.zooKeeper, false);
        }
        events.shutdownNow();
        callbacks.shutdownNow();
    }

    // ---------------------------------------------------------------- the state machine

    /** Events thread. One ZooKeeper event of one handle. */
    private void onEvent(Handle h, WatchedEvent event) {
        // A handle declared lost stays lost: a late SyncConnected on it (a failed login that keeps
        // connecting) must not start a session nobody would ever end.
        if (h != current || h.lost || closed.get() || event.getType() != Watcher.Event.EventType.None) {
            return;
        }
        switch (event.getState()) {
            case SyncConnected:
                if (h.session == null && (chrootExists || settings.chroot().isEmpty() || !settings.createChroot())) {
                    establish(h);
                } else if (h.session == null && !h.checkingChroot) {
                    h.checkingChroot = true;
                    ChrootCreator.ensure(h.zooKeeper, settings, name)
                            .whenComplete((known, failure) -> onEventsThread(() -> chrootChecked(h, known, failure)));
                } else if (state == ConnectionState.SUSPENDED) {
                    transition(ConnectionState.RECONNECTED);
                }
                break;
            case Disconnected:
                if (state.isConnected()) {
                    disconnectedAt = settings.clock().nanoTime();
                    transition(ConnectionState.SUSPENDED);
                }
                break;
            case Expired:
                loseSession(h, "ZooKeeper reported the session expired", Duration.ZERO);
                break;
            case AuthFailed:
                // If build() is waiting, it fails now: the same credentials would fail again.
                CompletableFuture<Void> first = firstSession;
                if (first != null && h.session == null) {
                    first.completeExceptionally(FirstConnection.authenticationFailed(settings));
                }
                CompletableFuture<Void> login = firstSaslLogin;
                if (login != null) {
                    login.completeExceptionally(FirstConnection.authenticationFailed(settings));
                }
                // The handle stops for good without an Expired: the session cannot be used.
                loseSession(h, "authentication failed (check the authorization given to the builder)",
                        AUTH_FAILED_REBUILD_DELAY);
                break;
            case SaslAuthenticated:
                CompletableFuture<Void> loggedIn = firstSaslLogin;
                if (loggedIn != null) {
                    loggedIn.complete(null);
                }
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

    /**
     * Events thread. The chroot was checked (and created if missing) after {@code h} connected:
     * the session can be reported now. If it is missing and could not be created, {@link
     * #start()} fails with the reason; a client made by {@code start()} logs it, goes on (its
     * recipes then fail naming the chroot) and checks again with its next session. If the
     * connection was lost before the check was answered, nothing is reported: the check is made
     * again when the handle reconnects.
     */
    private void chrootChecked(Handle h, Boolean known, Throwable failure) {
        if (failure == null && !known) {
            h.checkingChroot = false; // its SyncConnected, queued behind this, checks again
            return;
        }
        if (failure == null) {
            chrootExists = true;
        } else {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            CompletableFuture<Void> first = firstSession;
            if (first != null && first.completeExceptionally(cause)) {
                return;
            }
            log.warn("{}: {}", name, cause.getMessage());
        }
        if (h == current && h.session == null && !h.lost && !closed.get()) {
            establish(h);
        }
    }

    private void onEventsThread(Runnable task) {
        try {
            events.execute(task);
        } catch (RejectedExecutionException closing) {
            // the client is closing: nothing more to report
        }
    }

    /** Events thread. The handle's first connection: a new session. */
    private void establish(Handle h) {
        h.session = SessionAccess.open(h.zooKeeper, retryLoop);
        rebuilder.resetAttempts();
        session = h.session;
        CompletableFuture<ZkSession> waiting = nextSession;
        CompletableFuture<ZkSession> waitingUnlessRefused = nextUnlessRefused;
        tlsWatch.sessionEstablished();
        log.info("{}: session 0x{} established, timeout {} ms", name, Long.toHexString(h.session.id()),
                h.session.timeoutMillis());
        transition(state == ConnectionState.CONNECTING ? ConnectionState.CONNECTED : ConnectionState.RECONNECTED);
        waiting.complete(h.session);
        if (!waitingUnlessRefused.complete(h.session)) {
            // Failed by a TLS refusal that this session ended: from now on, as nextSession. Kept
            // failed, it would fail an acquisition that comes after this session's handle stopped
            // and before the loss below replaces it, with a refusal long over.
            nextUnlessRefused = waiting;
        }
        rebuilder.sessionEstablished();
    }

    /** Events thread, every tick: declares LOST once disconnected for the session timeout. */
    private void checkPresumedLoss() {
        try {
            presumeLossIfSilent();
        } catch (Throwable t) {
            // A periodic task that throws is never run again: keep the check alive.
            log.error("{}: checking for a presumed session loss failed", name, t);
        }
    }

    private void presumeLossIfSilent() {
        Handle h = current;
        if (h != null && h.session != null && !h.lost && state.isConnected() && !closed.get()
                && !h.zooKeeper.getState().isConnected() && h.zooKeeper.getState().isAlive()) {
            // The handle is reconnecting but its Disconnected event never came (ZooKeeper's client
            // can swallow it): report the outage from the handle's own state.
            disconnectedAt = settings.clock().nanoTime();
            log.warn("{}: the handle is {} without a Disconnected event; SUSPENDED", name, h.zooKeeper.getState());
            transition(ConnectionState.SUSPENDED);
            return;
        }
        if (state != ConnectionState.SUSPENDED || h == null || h.session == null || closed.get()) {
            return;
        }
        long silentNanos = settings.clock().nanoTime() - disconnectedAt;
        if (silentNanos >= TimeUnit.MILLISECONDS.toNanos(h.session.timeoutMillis())) {
            loseSession(h, "presumed expired: no server reached for " + TimeUnit.NANOSECONDS.toMillis(silentNanos)
                    + " ms, the session timeout is " + h.session.timeoutMillis() + " ms", Duration.ZERO);
            if (h.lost && !closed.get()) {
                rebuilder.endOnEnsembleWhenReachable(h);
            }
        }
    }

    /**
     * Events thread. Ends the session of {@code h}, reports LOST and starts a new session after
     * {@code rebuildDelay}. Once per handle. Each step is isolated from the one before, so that a
     * failing hook or listener cannot stop the rebuild.
     */
    private void loseSession(Handle h, String why, Duration rebuildDelay) {
        if (h.lost) {
            return;
        }
        h.lost = true;
        if (h.session == null) {
            // No session was ever established on this handle: nothing to report or end; a new
            // handle tries again (CONNECTING stays CONNECTING, a rebuild after LOST goes on).
            log.warn("{}: connecting to {} failed: {}", name, settings.connectString(), why);
            connectProblem = why;
            closeInBackground(h.zooKeeper, false);
            rebuilder.rebuildAfter(Duration.ofMillis(Math.max(rebuildDelay.toMillis(),
                    AUTH_FAILED_REBUILD_DELAY.toMillis())));
            return;
        }
        log.warn("{}: session 0x{} lost: {}", name, Long.toHexString(h.session.id()), why);
        if (nextSession.isDone()) {
            nextSession = new CompletableFuture<>();
        }
        if (nextUnlessRefused.isDone()) {
            nextUnlessRefused = new CompletableFuture<>();
        }
        SessionAccess.end(h.session);
        transition(ConnectionState.LOST);
        closeInBackground(h.zooKeeper, true);
        tlsWatch.noSession();
        rebuilder.rebuildAfter(rebuildDelay);
    }

    /** Events thread. Tells every listener, whatever any of them throws. */
    private void transition(ConnectionState next) {
        state = next;
        log.info("{}: {}", name, next);
        for (ConnectionListener l : listeners) {
            try {
                l.stateChanged(next);
            } catch (Throwable t) {
                log.error("{}: connection listener {} failed on {}", name, l, next, t);
            }
        }
    }

    // ---------------------------------------------------------------- close

    /**
     * Ends the session and wakes everything waiting for one at once, then delivers CLOSED and
     * closes the handle, waiting for both at most {@link #CLOSE_BUDGET_MILLIS}: whatever the
     * network does, close returns in about a second. A handle that cannot say goodbye to the
     * ensemble (silent network) is closed in the background; the ensemble then expires the session
     * by itself.
     */
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        log.info("{}: closing", name);
        tlsWatch.close();
        rebuilder.close();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_BUDGET_MILLIS);
        endCurrentSession();
        // Called by a listener, on the events thread: CLOSED is queued behind the transition being
        // delivered now, so it cannot be waited for here; shutdown() below lets it run once this
        // listener returns, after the other listeners saw this transition.
        boolean onEventsThread = Thread.currentThread().getName().equals(name + "-events");
        CompletableFuture<Void> delivered;
        try {
            // On the events thread, so that a session established just before close() was called
            // (published after the line above read the old one) is ended too, before CLOSED.
            delivered = CompletableFuture.runAsync(() -> {
                endCurrentSession();
                transition(ConnectionState.CLOSED);
            }, events);
        } catch (RejectedExecutionException e) {
            log.warn("{}: CLOSED not delivered: the events thread has stopped", name);
            delivered = CompletableFuture.completedFuture(null);
        }
        Handle last = current;
        CompletableFuture<Void> handleClosed = last == null ? CompletableFuture.completedFuture(null)
                : closeInBackground(last.zooKeeper, last.session != null);
        boolean interrupted = false;
        CompletableFuture<Void> both = onEventsThread ? handleClosed : CompletableFuture.allOf(delivered, handleClosed);
        for (;;) {
            try {
                both.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true; // finish closing first; the flag is set again below
            } catch (ExecutionException | TimeoutException e) {
                log.warn("{}: closing goes on in the background (CLOSED delivered: {}, handle closed: {})", name,
                        delivered.isDone(), handleClosed.isDone());
                break;
            }
        }
        events.shutdown();
        callbacks.shutdown();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the latest session, if still alive, and fails every wait for a new one. */
    private void endCurrentSession() {
        ZkSession s = session;
        if (s != null) {
            SessionAccess.end(s);
        }
        nextSession.completeExceptionally(new IllegalStateException(name + " is closed"));
        nextUnlessRefused.completeExceptionally(new IllegalStateException(name + " is closed"));
    }

    CompletableFuture<Void> closeInBackground(ZooKeeper zk, boolean goodbye) {
        return HandleCloser.closeInBackground(zk, goodbye, name + "-close-handle");
    }

    private static ThreadFactory numbered(String prefix) {
        AtomicInteger ids = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + ids.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static ThreadFactory daemon(String threadName) {
        return r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        };
    }
}
