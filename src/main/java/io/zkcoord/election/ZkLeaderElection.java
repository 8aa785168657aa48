package io.zkcoord.election;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.InOrder;
import io.zkcoord.queue.Acquisition;
import io.zkcoord.queue.Grant;
import io.zkcoord.queue.QueueDirectory;
import io.zkcoord.queue.CuratorNames;
import io.zkcoord.queue.QueueNaming;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.Waits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election among every process that uses the same path on the same ZooKeeper ensemble:
 * exactly the participant whose node is first in the queue leads.
 *
 * <pre>{@code
 * ZkLeaderElection election = new ZkLeaderElection(client, "/elections/scheduler", "worker-3");
 * election.addListener(new LeadershipListener() {
 *     public void elected(long epoch) { scheduler.startWith(epoch); }
 *     public void revoked(long epoch, RevokeReason reason) { scheduler.stopNow(); }
 * });
 * election.start();
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One leader, herd-free.</b> Each participant queues an {@code EPHEMERAL_SEQUENTIAL} node
 *       whose data is its id, and watches only its predecessor: one leadership change wakes one
 *       participant, whatever their number.
 *   <li><b>Step-down comes first.</b> When the client reports {@link ConnectionState#SUSPENDED}, a
 *       leader stops at once: {@link #isLeader()} turns false and {@code revoked(epoch,
 *       SUSPENDED)} is the next event. If the same session comes back ({@link
 *       ConnectionState#RECONNECTED}) its node still leads, and {@code elected(sameEpoch)} follows.
 *       When the session is lost, {@code revoked(epoch, LOST)} (unless told already), and the
 *       participant joins again in the new session, at the back of the queue. The client notices a
 *       silent network after two thirds of the session timeout, while the ensemble gives the node
 *       away only after the whole timeout: a partitioned leader steps down before the next one is
 *       elected. <b>Not so when a session is ended on the server on purpose</b> (or expires while
 *       the leader's process is frozen): the server gives the node away the moment it ends the
 *       session, before the old leader can hear of it. There only the epoch protects the resource.
 *   <li><b>Epochs fence.</b> {@link #epoch()} is the {@code czxid} of the leader's node: it strictly
 *       increases from each leader to the next, also when the election path is deleted and made
 *       again. A resource that remembers the highest epoch it accepted refuses the old leader:
 *       <pre>{@code
 * // in the resource, atomically:
 * if (epoch < highestEpochSeen) throw new StaleLeaderException(epoch);
 * highestEpochSeen = epoch;
 * apply(write);
 *       }</pre>
 *   <li><b>Listeners</b> run one at a time, in order, on a library thread (never ZooKeeper's);
 *       {@code elected} and {@code revoked} strictly alternate for each listener, whatever the
 *       others do (a listener that calls {@link #close()} inside {@code elected} makes the listeners
 *       already told hear {@code revoked(CLOSED)}, and those not yet told hear nothing); whatever a
 *       listener throws is logged and the others still run.
 *   <li>{@link #participants()} and {@link #leader()} read ZooKeeper in two round trips whatever
 *       the number of participants.
 *   <li>A create whose reply was lost is found again by its attempt id: no ghost participant.
 *   <li><b>Do not delete election nodes by hand.</b> A leader does not watch its own node (that
 *       would cost every leadership change a second notification): if its node is deleted from
 *       outside while its session lives, the next participant leads while this one still believes
 *       it does, until its session ends. The epochs still fence the old leader's writes.
 *   <li>{@link #close()} is idempotent, returns within about a second whatever the network does,
 *       and deletes this participant's node (in the background until the connection returns, or
 *       with the session).
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ZkLeaderElection implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkLeaderElection.class);
    private static final String KIND = "leader";
    /** The kind whose Curator name is a mutex's ({@code lock-}), as {@code LeaderSelector} writes. */
    private static final String SELECTOR_KIND = "lock";
    private static final int MAX_ID_BYTES = 1024;
    /** How long {@link #close()} waits for the listeners to hear {@code revoked(CLOSED)}. */
    private static final long CLOSE_LISTENER_WAIT_MILLIS = 500;
    private static final long REJOIN_DELAY_MILLIS = 1_000;

    /** Where this participant stands. */
    private enum Phase {
        NEW,
        /** Queued (or about to be): not leading. */
        WAITING,
        /** Its node is first and the client is connected. */
        LEADING,
        /** Its node is first, but the client is SUSPENDED: not leading until RECONNECTED. */
        STEPPED_DOWN,
        CLOSED
    }

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final String participantId;
    private final byte[] data;
    private final QueueDirectory queue;
    /** The kind of this participant's nodes: {@link #KIND}, or {@link #SELECTOR_KIND}. */
    private final String kind;
    private final InOrder events;
    /** Touched only by tasks run by {@link #events}. */
    private final List<Told> listeners = new CopyOnWriteArrayList<>();
    private final ConnectionListener connection = this::connectionChanged;
    /** Touched only by tasks run by {@link #events}. */
    private final LeadershipObservation observation;

    // Guarded by this.
    private Phase phase = Phase.NEW;
    private Acquisition acquisition;
    private Grant grant;
    private Runnable cancelLossHook = () -> { };
    /** Why this participant stopped by itself, if ZooKeeper refused it for want of permission. */
    private io.zkcoord.NotAuthorizedException refusal;

    /** Set by a {@link #close()} called from a listener (see {@link #tellElected}). */
    private volatile boolean closedByListener;
    /**
     * Whether this participant's leadership was last announced as {@code elected}, and with which
     * epoch. Each listener also remembers what it was told ({@link Told}): a listener that ends the
     * leadership while the others are being told (a {@link #close()} inside {@code elected}) must
     * leave those not yet told without an {@code elected}, and those told with their {@code revoked}.
     * Touched only by tasks run by {@link #events}.
     */
    private boolean toldElected;
    private long toldEpoch;

    /**
     * @param client the client whose session holds this participant's node
     * @param path the election's directory, e.g. {@code /elections/scheduler}; created on demand
     * @param participantId this participant's id, as others read it: non-empty, at most 1 KiB in UTF-8
     * @throws IllegalArgumentException if {@code client} is null, the id is null, empty or too long,
     *     or the path is not a valid directory path
     */
    public ZkLeaderElection(ZkClient client, String path, String participantId) {
        this(client, path, participantId, Protocol.ZKCOORD);
    }

    /**
     * A participant that names and orders its node by {@code protocol}. With {@link
     * Protocol#CURATOR} it takes part beside Apache Curator's {@code LeaderLatch} on the same path
     * as one of them: node {@code _c_<uuid>-latch-<sequence>} holding the participant id, queue in
     * Curator's order, one watch on the predecessor; exactly one participant of either library
     * leads. <b>Not</b> beside Curator's {@code LeaderSelector}: a selector is a mutex ({@code
     * lock-} nodes) and puts every {@code latch-} node after its own, however old, so it would
     * lead beside this participant; while selectors run on a path, use {@link
     * #sharingWithLeaderSelector} instead (see docs/migrating-from-curator.md). Everything else is as {@link #ZkLeaderElection(ZkClient,
     * String, String)}: epochs, step-down on SUSPENDED, listeners.
     *
     * @param client the client whose session holds this participant's node
     * @param path the election's directory, e.g. {@code /elections/scheduler}; created on demand
     * @param participantId this participant's id, as others read it: non-empty, at most 1 KiB in UTF-8
     * @param protocol {@link Protocol#ZKCOORD}, or {@link Protocol#CURATOR} while Curator processes
     *     take part on the path
     * @throws IllegalArgumentException if {@code client} or {@code protocol} is null, the id is
     *     null, empty or too long, or the path is not a valid directory path
     */
    public ZkLeaderElection(ZkClient client, String path, String participantId, Protocol protocol) {
        this(client, path, participantId, QueueNaming.of(protocol, CuratorNames.LATCH), KIND);
    }

    /**
     * A participant that takes part beside Apache Curator's {@code LeaderSelector} on the same path,
     * as one of them, for a rolling move off selectors: node {@code _c_<uuid>-lock-<sequence>}
     * holding the participant id in UTF-8 (what a selector writes when given an id), queue in
     * Curator's mutex order, leader the first node, one watch on the predecessor. Exactly one
     * participant of either library leads. A selector leads while its {@code takeLeadership}
     * runs; this participant leads as any {@code ZkLeaderElection} does, until closed or its
     * session is lost. Everything else is as {@link #ZkLeaderElection(ZkClient, String, String)}:
     * epochs, step-down on SUSPENDED, listeners, rejoining after loss.
     *
     * <p><b>Do not mix with Curator's {@code LeaderLatch}</b>, nor with {@link
     * #ZkLeaderElection(ZkClient, String, String, Protocol)} under {@link Protocol#CURATOR}, on the
     * same path: a latch writes {@code latch-} nodes, which a selector (and this participant) puts
     * after every {@code lock-} node, however old, while a latch sorts the other way; the two
     * sides would each see a leader of their own. Use one path per kind of Curator election.
     *
     * <p>The participant returned is thread-safe, as every {@code ZkLeaderElection}.
     *
     * @param client the client whose session holds this participant's node
     * @param path the election's directory, the selector's leader path; created on demand
     * @param participantId this participant's id, as others read it: non-empty, at most 1 KiB in UTF-8
     * @return a new participant, not started
     * @throws IllegalArgumentException if {@code client} is null, the id is null, empty or too long,
     *     or the path is not a valid directory path
     */
    public static ZkLeaderElection sharingWithLeaderSelector(ZkClient client, String path, String participantId) {
        return new ZkLeaderElection(client, path, participantId, QueueNaming.curator(CuratorNames.MUTEX),
                SELECTOR_KIND);
    }

    private ZkLeaderElection(ZkClient client, String path, String participantId, QueueNaming naming, String kind) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (participantId == null || participantId.isEmpty()) {
            throw new IllegalArgumentException("participantId must not be null or empty");
        }
        byte[] id = participantId.getBytes(StandardCharsets.UTF_8);
        if (id.length > MAX_ID_BYTES) {
            throw new IllegalArgumentException("participantId must be at most " + MAX_ID_BYTES + " bytes in UTF-8, was "
                    + id.length);
        }
        this.client = client;
        this.services = ClientServices.of(client);
        this.path = QueuePaths.validate("election", path);
        this.participantId = participantId;
        this.data = id;
        this.queue = new QueueDirectory(client, path, naming);
        this.kind = kind;
        this.events = new InOrder(services.userCallbacks());
        this.observation = new LeadershipObservation(services.observer(), this.path);
    }

    /**
     * Joins the election and returns at once; leadership comes through the listeners, {@link
     * #isLeader()} and {@link #awaitLeadership(Duration)}. A failure to join is retried, except a
     * refusal for want of permission (the ACL of the election's directory): then the participant
     * stops for good, as if closed, logs the refusal, and {@link #awaitLeadership(Duration)}
     * throws it.
     *
     * @throws IllegalStateException if started before, closed, or the client is closed
     */
    public void start() {
        synchronized (this) {
            if (phase != Phase.NEW) {
                throw new IllegalStateException(describe() + (phase == Phase.CLOSED ? " is closed" : " was already started"));
            }
            client.addConnectionListener(connection);
            phase = Phase.WAITING;
            join();
            events.execute(observation::waiting);
        }
    }

    /** @return true only while this participant leads and its client is connected */
    public boolean isLeader() {
        synchronized (this) {
            return phase == Phase.LEADING && connected();
        }
    }

    /**
     * @return the epoch of the current leadership: the {@code czxid} of this participant's node
     * @throws IllegalStateException if this participant does not lead now
     */
    public long epoch() {
        synchronized (this) {
            if (phase != Phase.LEADING || !connected()) {
                throw new IllegalStateException(describe() + " does not lead");
            }
            return grant.czxid();
        }
    }

    /**
     * Waits until this participant leads, at most {@code maxWait}.
     *
     * @param maxWait how long to wait at most
     * @return true if it leads on return; false if the time ran out, or it is closed or not started
     * @throws IllegalArgumentException if {@code maxWait} is null
     * @throws io.zkcoord.NotAuthorizedException if ZooKeeper refused this participant's node (an
     *     ACL that does not grant its identities CREATE or READ on the directory): it stopped
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitLeadership(Duration maxWait) throws InterruptedException {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        long deadline = System.nanoTime() + Math.min(maxWait.toNanos(), Waits.FOREVER);
        synchronized (this) {
            for (;;) {
                if (phase == Phase.LEADING && connected()) {
                    return true;
                }
                if (refusal != null) {
                    throw refusal;
                }
                if (phase == Phase.CLOSED || phase == Phase.NEW) {
                    return false;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                // Woken by every change of phase; the connection is looked at again at least every 50 ms.
                wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(remaining), 50)));
            }
        }
    }

    /**
     * Adds a listener. If this participant leads now, the listener is told {@code elected} first.
     *
     * @param listener the listener to add
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(LeadershipListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        events.execute(() -> {
            Told told = new Told(listener);
            listeners.add(told);
            if (toldElected) {
                told.elected = true;
                long epoch = toldEpoch; // what the others were told, so its next revoked matches
                call(listener, l -> l.elected(epoch));
            }
        });
    }

    /**
     * Reads the current leader from ZooKeeper (two round trips).
     *
     * @return the leader, or empty if nobody takes part
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws IllegalStateException if the client is closed
     * @throws io.zkcoord.CoordinationException if ZooKeeper cannot be reached within the retry policy
     */
    public Optional<Participant> leader() throws InterruptedException {
        List<Participant> all = participants();
        return all.isEmpty() ? Optional.empty() : Optional.of(all.get(0));
    }

    /**
     * Reads every participant from ZooKeeper, in queue order, leader first: one read of the queue,
     * then one {@code multi} read of every node's data, whatever their number. A participant that
     * leaves between the two reads is left out.
     *
     * @return every participant, the leader first
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws IllegalStateException if the client is closed
     * @throws io.zkcoord.CoordinationException if ZooKeeper cannot be reached within the retry policy
     */
    public List<Participant> participants() throws InterruptedException {
        ZkSession session = client.session();
        try {
            List<QueueDirectory.Entry> entries = queue.readEntries(session).get();
            List<Participant> participants = new ArrayList<>(entries.size());
            for (int i = 0; i < entries.size(); i++) {
                QueueDirectory.Entry e = entries.get(i);
                participants.add(new Participant(new String(e.data(), StandardCharsets.UTF_8), e.czxid(), i == 0));
            }
            return participants;
        } catch (ExecutionException e) {
            throw Waits.rethrow(e.getCause());
        }
    }

    /** @return this participant's id */
    public String participantId() {
        return participantId;
    }

    /** @return the election's directory, as given */
    public String path() {
        return path;
    }

    /**
     * Leaves the election: a leader is told {@code revoked(epoch, CLOSED)} first, then its node is
     * deleted (in the background if the ensemble cannot be reached now; the node goes with the
     * session in any case). Idempotent; returns within about a second; never throws.
     */
    @Override
    public void close() {
        Grant held;
        Acquisition waiting;
        boolean wasLeading;
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                return;
            }
            wasLeading = phase == Phase.LEADING;
            phase = Phase.CLOSED;
            held = grant;
            grant = null;
            waiting = acquisition;
            acquisition = null;
            cancelLossHook.run();
            notifyAll();
        }
        client.removeConnectionListener(connection);
        if (waiting != null) {
            waiting.abandon();
        }
        boolean interrupted = false;
        if (events.calledFromTask()) {
            // Called by a listener: the listeners are this very thread, so they hear revoked(CLOSED)
            // now, in order, before the node goes (the other tasks wait for this one anyway).
            closedByListener = true;
            if (wasLeading) {
                revokedNow(held.czxid(), RevokeReason.CLOSED);
            }
            observation.closed();
        } else {
            CompletableFuture<Void> told = new CompletableFuture<>();
            if (wasLeading) {
                tellRevoked(held.czxid(), RevokeReason.CLOSED);
            }
            events.execute(observation::closed);
            events.execute(() -> told.complete(null));
            try {
                told.get(CLOSE_LISTENER_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException | TimeoutException e) {
                log.warn("{}: listeners still busy with revoked(CLOSED); the node is deleted anyway", describe());
            }
        }
        if (held != null && held.session().isAlive()) {
            queue.alone().deleteInBackground(held);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ZkLeaderElection[" + path + ", " + participantId + ", " + phaseNow() + "]";
    }

    // ------------------------------------------------------------------ the state machine

    /** Queues a node; its grant makes this participant lead. Caller holds the monitor. */
    private void join() {
        Acquisition a = queue.acquire(kind, ElectionRule.INSTANCE, false, data);
        acquisition = a;
        a.result().whenComplete((g, failure) -> joined(a, g, failure));
    }

    private synchronized void joined(Acquisition a, Grant g, Throwable failure) {
        if (a != acquisition || phase == Phase.CLOSED) {
            if (g != null) {
                queue.alone().deleteInBackground(g); // nobody takes part with it any more
            }
            return;
        }
        acquisition = null;
        if (failure instanceof io.zkcoord.NotAuthorizedException refused) {
            // Permanent: the same identities would be refused again. Stop rather than retry forever.
            log.error("{}: cannot take part: {}", describe(), refused.getMessage());
            refusal = refused;
            phase = Phase.CLOSED;
            client.removeConnectionListener(connection);
            events.execute(observation::closed);
            notifyAll();
            return;
        }
        if (failure != null) {
            if (!client.isClosed()) {
                log.warn("{}: could not join; trying again in {} ms: {}", describe(), REJOIN_DELAY_MILLIS, failure.toString());
                services.scheduler().schedule(this::rejoin, REJOIN_DELAY_MILLIS, TimeUnit.MILLISECONDS);
            }
            return;
        }
        if (g == null) {
            return; // abandoned by close()
        }
        grant = g;
        phase = connected() ? Phase.LEADING : Phase.STEPPED_DOWN;
        // Registered after the phase is set: a session already ended runs the hook at once.
        cancelLossHook = g.session().onEnd(() -> sessionEnded(g));
        if (phase == Phase.LEADING && grant == g) {
            log.info("{} leads with epoch {}", describe(), g.czxid());
            tellElected(g.czxid());
        }
        notifyAll();
    }

    private synchronized void rejoin() {
        if (phase == Phase.WAITING && acquisition == null && grant == null && !client.isClosed()) {
            join();
        }
    }

    /** Events thread of the client. */
    private synchronized void connectionChanged(ConnectionState state) {
        if (state == ConnectionState.SUSPENDED && phase == Phase.LEADING) {
            phase = Phase.STEPPED_DOWN;
            log.warn("{} steps down: the connection is suspended", describe());
            tellRevoked(grant.czxid(), RevokeReason.SUSPENDED);
        } else if (state == ConnectionState.RECONNECTED && phase == Phase.STEPPED_DOWN && grant != null
                && grant.session().isAlive()) {
            phase = Phase.LEADING; // the same session: its node still leads
            log.info("{} leads again with epoch {}", describe(), grant.czxid());
            tellElected(grant.czxid());
        }
        notifyAll();
    }

    /** Session-end hook of a leadership: the node went with the session. */
    private synchronized void sessionEnded(Grant g) {
        if (g != grant) {
            return;
        }
        if (phase == Phase.LEADING) {
            tellRevoked(g.czxid(), RevokeReason.LOST);
        }
        grant = null;
        if (phase != Phase.CLOSED) {
            phase = Phase.WAITING;
            log.warn("{}: session lost; joining again", describe());
            if (!client.isClosed()) {
                join(); // waits for the next session
            }
        }
        notifyAll();
    }

    private void tellElected(long epoch) {
        events.execute(() -> {
            // Not after a close() made by a listener: that close told its revoked(CLOSED) inline, ahead
            // of this task, so an elected now would never be followed by a revoked. (A close() from
            // any other thread queues its revoked(CLOSED) behind this task: elected, then revoked.)
            if (!toldElected && !closedByListener) {
                toldElected = true;
                toldEpoch = epoch;
                observation.elected(epoch);
                for (Told told : listeners) {
                    if (!toldElected) {
                        // A listener ended the leadership (close()) and the listeners already told
                        // heard their revoked: the others must not hear an elected no revoked follows.
                        break;
                    }
                    if (!told.elected) {
                        told.elected = true;
                        call(told.listener, x -> x.elected(epoch));
                    }
                }
            }
        });
    }

    private void tellRevoked(long epoch, RevokeReason reason) {
        events.execute(() -> revokedNow(epoch, reason));
    }

    /** Only on {@link #events}' thread. */
    private void revokedNow(long epoch, RevokeReason reason) {
        if (toldElected) {
            toldElected = false;
            observation.revoked(reason);
            for (Told told : listeners) {
                if (told.elected) {
                    told.elected = false;
                    call(told.listener, x -> x.revoked(epoch, reason));
                }
            }
        }
    }

    /** A listener and whether it was last told {@code elected}. Touched only by tasks run by {@link #events}. */
    private static final class Told {
        final LeadershipListener listener;
        boolean elected;

        Told(LeadershipListener listener) {
            this.listener = listener;
        }
    }

    private void call(LeadershipListener listener, java.util.function.Consumer<LeadershipListener> event) {
        try {
            event.accept(listener);
        } catch (Throwable t) {
            log.error("{}: leadership listener {} failed", describe(), listener, t);
        }
    }

    private synchronized Phase phaseNow() {
        return phase;
    }

    private boolean connected() {
        ConnectionState s = client.state();
        return s != null && s.isConnected();
    }

    private String describe() {
        return "participant " + participantId + " of election " + path;
    }
}
