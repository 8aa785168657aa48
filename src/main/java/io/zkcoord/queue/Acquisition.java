package io.zkcoord.queue;

import io.zkcoord.CoordinationException;
import io.zkcoord.NotAuthorizedException;
import io.zkcoord.TlsConnectException;
import io.zkcoord.ZkSession;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition in the directories of a {@link QueueSet}: one for every recipe, several for a
 * multi-lock (a node in each, all made in one transaction). A state machine, driven by ZooKeeper's
 * callbacks and watches and by the client's scheduler, that completes {@link #result()}. No thread waits inside
 * it; whoever wants the outcome waits on the future with a deadline of its own, and gives up with
 * {@link #abandon()}.
 *
 * <h2>The protocol, top to bottom</h2>
 * <ol>
 *   <li><b>Session.</b> Take the client's live session, or wait (without a thread) for the next.
 *   <li><b>Enqueue.</b> Once the session has a create slot free ({@link CreateWindow}: at most
 *       {@value CreateWindow#SIZE} creates in flight per session; the others wait in line, and an
 *       acquisition abandoned there sends nothing), send {@code create
 *       <dir>/<kind>-<attemptId>-} ({@code EPHEMERAL_SEQUENTIAL}) and, without waiting for its
 *       reply, {@code getChildren <dir>}: the server runs one
 *       session's requests in order, so the list already holds the new node, and an uncontended
 *       acquisition costs one round trip. A directory the client does not know to exist is made
 *       in the create's own transaction ({@link QueueSet#create}), and the pipelined read then
 *       watches its children, for the lone hold it most likely grants ({@link LoneHolds}); a
 *       missing one is made again the same way, and missing parents first, and the pair sent again. Several directories: one {@code multi} of creates, then
 *       one {@code multi} of {@code getChildren} (such a read sets no watch, so a rule answering
 *       {@link Turn.WatchQueue} is not supported there).
 *   <li><b>Recover a lost reply.</b> If the connection dropped before the create's reply, the node
 *       may exist: {@code sync} and read the directories, look for the attempt id, and create again
 *       only if it is not there (found in some directories only: delete those, and start a fresh
 *       attempt).
 *   <li><b>Decide.</b> Ask the recipe's {@link QueueRule} about every queue ({@link EveryQueue}):
 *       held everywhere, watch one node, or missing (then the attempt's other nodes are deleted and
 *       it queues again).
 *   <li><b>Watch</b> that one node ({@code getData} with a watch: no watch is left if it is already
 *       gone), through the session's one watcher of that node ({@link SharedWatches}), which every
 *       acquisition waiting on the node shares. Gone already: read again (step 4). Its watch
 *       fires: held if it was the only blocker, otherwise read again.
 *   <li><b>Grant</b>: complete the future with the nodes, their session and their czxid. A grant
 *       whose release may remove the directory keeps the children watch its read set, if any
 *       ({@link LoneHolds}).
 * </ol>
 * A session that ends while waiting takes the node with it: the acquisition queues again in the
 * next session (from step 1). A passing failure (connection loss) repeats the step after the
 * retry policy's delay; when the policy gives up the acquisition fails with {@link
 * CoordinationException}. A closed client fails it with {@link IllegalStateException}.
 *
 * <p>This class is the state machine: every transition, and what every reply means, is here, in
 * the order of the steps. Three steps keep their requests and their bookkeeping in a class of
 * their own, owned by the acquisition and used under its monitor only: {@link CreateAttempt}
 * (steps 2 and 3: the attempt id, the create slot, whether a create may have made a node unseen,
 * the search by attempt id), {@link QueueReads} (step 4: the reads, the rule's answer over every
 * queue, what a grant takes from its read) and {@link Watching} (step 5: the watch waited on, and
 * a lone hold's watch of its directory). Its own nodes, once known, are one value ({@link
 * OwnNodes}).
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>A node made by this acquisition exists only while the acquisition waits or holds: abandon,
 *       failure and a one look that does not hold delete it in the background; a create whose
 *       outcome is unknown is looked for by its attempt id and deleted.
 *   <li>At most one watch at a time, on exactly the node the rule named. An acquisition that stops
 *       waiting leaves its watch and sends nothing; the session's client holds at most one watcher
 *       per node its acquisitions watched and that has not changed since.
 *   <li>Abandoned, it sends no create any more; a create in flight is deleted when its reply
 *       arrives.
 *   <li>{@link #result()} completes exactly once: with the {@link Grant}, with null (abandoned, or
 *       one look that did not hold), or exceptionally.
 * </ul>
 *
 * <p>Thread-safe: every step runs under the acquisition's monitor, none of them blocks, and replies
 * to a step that is no longer current are recognised by their step number and ignored (a create's
 * reply is still used to delete its node).
 */
public final class Acquisition {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

    private enum State {
        /** Waiting for a live session (start, or the last one ended). */
        AWAITING_SESSION,
        /** Waiting for a create slot, or the create and the first read are on their way, or a delayed retry of them. */
        ENQUEUEING,
        /** Looking for the node of a create whose reply was lost. */
        RECOVERING,
        /** Reading the queue. */
        READING,
        /** Watching the node the rule named. */
        WATCHING,
        /** The session answered that it expired: waiting for the client to end it. */
        AWAITING_SESSION_END,
        /** Terminal: the future holds the grant. */
        GRANTED,
        /** Terminal: given up by the caller, or one look that did not hold. */
        ABANDONED,
        /** Terminal: failed. */
        FAILED;

        boolean terminal() {
            return this == GRANTED || this == ABANDONED || this == FAILED;
        }
    }

    private final QueueSet queues;
    /** The first directory: its client's services, its scheduler, its guard. */
    private final QueueDirectory queue;
    /** The directories, for messages. */
    private final String dir;
    private final QueueRule rule;
    private final QueueSessions sessions;
    private final boolean oneLook;
    private final byte[] data;
    private final CompletableFuture<Grant> result = new CompletableFuture<>();
    /** Completes once an acquisition that ended without a grant has no node left (or stopped trying). */
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();
    /** Steps 2 and 3: the create line, and the search for a node whose create's reply was lost. */
    private final CreateAttempt create;
    /** Step 4: the reads of the queues, and what the rule decides on them. */
    private final QueueReads reads;
    /** Step 5: the watch waited on, and a lone hold's watch of its directory. */
    private final Watching watching;

    // Guarded by this.
    private State state = State.AWAITING_SESSION;
    /** Number of the current step; replies and timers of older steps are ignored. */
    private int step;
    private ZkSession session;
    private Runnable cancelSessionHook = () -> { };
    /** Stops waiting for the next session ({@link SessionWaits}); does nothing when not waiting. */
    private Runnable cancelSessionWait = () -> { };
    /** Our nodes, one per directory in the set's order, once known; null before. */
    private OwnNodes own;
    /** True once the rule has answered at least once. */
    private volatile boolean looked;
    /** Retries of the current failing step, and when its first try failed. */
    private int retries;
    private long failingSince;

    Acquisition(QueueSet queues, String kind, QueueRule rule, boolean oneLook, byte[] data) {
        this.queues = queues;
        this.queue = queues.first();
        this.dir = queues.toString();
        this.rule = rule;
        this.sessions = QueueSessions.of(queue.services());
        this.oneLook = oneLook;
        this.data = data;
        this.create = new CreateAttempt(queues, kind, data);
        this.reads = new QueueReads(queues, rule);
        this.watching = new Watching(sessions);
    }

    /**
     * @return completes with the grant; with null if abandoned, or if a one-look acquisition did
     *     not hold at its first answer; exceptionally with {@link CoordinationException} (the
     *     retry policy gave up, or the ensemble refused) or {@link IllegalStateException} (the
     *     client closed). Completed on a ZooKeeper or library thread: dependents must be quick.
     */
    public CompletableFuture<Grant> result() {
        return result;
    }

    /**
     * Gives up: the node is deleted in the background (or found by its attempt id and deleted,
     * if its create is still unanswered) and {@link #result()} completes with null. Never blocks.
     *
     * @return true if the acquisition will not hold (also if it had already ended without a
     *     grant); false if it was granted first: the caller then owns the grant
     */
    public synchronized boolean abandon() {
        if (state == State.GRANTED) {
            return false;
        }
        end(State.ABANDONED, null);
        return true;
    }

    /**
     * Tells the acquisition that a thread now blocks on it (a blocking {@code lock()} or {@code
     * acquire()}): a create of it waiting for a slot of the session's {@link CreateWindow} takes
     * its turn among those that blocked threads wait on, ahead of a backlog of {@code
     * acquireAsync()} on other paths. Never blocks.
     */
    public synchronized void waitedOn() {
        create.waitedOn();
    }

    /**
     * @return true once the queue has been read and the rule has answered at least once (so a
     *     caller whose time ran out knows whether it ever got its look)
     */
    public boolean looked() {
        return looked;
    }

    /**
     * @return completes once an acquisition that ended without a grant has deleted its node (or
     *     found none, or stopped trying because its session ended); never for a granted one. For
     *     callers that want "no node left on return" when the ensemble answers, with a bound of
     *     their own.
     */
    public CompletableFuture<Void> cleanedUp() {
        return cleanedUp;
    }

    /** @return true while the client is connected: a clean-up sent now can be answered soon */
    public boolean connected() {
        return queue.services().isConnected();
    }

    synchronized void start() {
        queues.entered();
        awaitSession();
    }

    // ------------------------------------------------------------------ 1. session

    private void awaitSession() {
        create.leaveLine();
        state = State.AWAITING_SESSION;
        int s = ++step;
        // Fails at once while every server refuses the client's TLS for good (see ClientServices).
        CompletableFuture<ZkSession> next = queue.services().sessionUnlessRefused();
        cancelSessionWait.run(); // a wait of an earlier step, if one is still registered
        if (!next.isDone()) {
            // No session now (lost, being rebuilt): wait for one as long as the retry policy lets
            // a request wait for the connection, then fail.
            giveUpWithoutSession(s, 0, System.nanoTime());
        }
        cancelSessionWait = sessions.sessionWaits().await(next, (live, failure) -> {
            synchronized (this) {
                if (s != step) {
                    return;
                }
                cancelSessionWait = () -> { };
                Throwable cause = failure instanceof java.util.concurrent.CompletionException
                        && failure.getCause() != null ? failure.getCause() : failure;
                if (cause instanceof TlsConnectException refused) {
                    end(State.FAILED, new TlsConnectException(refused.problem(), "no ZooKeeper session for " + dir
                            + ": " + refused.getMessage(), refused));
                } else if (failure != null) {
                    end(State.FAILED, cause);
                } else {
                    enqueue(live);
                }
            }
        });
    }

    /** While waiting for a session: fails once the retry policy would give up on a connection. */
    private void giveUpWithoutSession(int s, int tries, long since) {
        Duration elapsed = Duration.ofNanos(System.nanoTime() - since);
        Optional<Duration> delay = queue.services().retryPolicy().retryDelay(tries, elapsed);
        if (delay.isEmpty()) {
            end(State.FAILED, new CoordinationException("no ZooKeeper session for " + dir + " after "
                    + elapsed.toMillis() + " ms under " + queue.services().retryPolicy()));
            return;
        }
        queue.schedule(() -> {
            synchronized (this) {
                if (s == step && state == State.AWAITING_SESSION) {
                    giveUpWithoutSession(s, tries + 1, since);
                }
            }
        }, delay.get().toMillis());
    }

    private void enqueue(ZkSession live) {
        session = live;
        retries = 0; // a new session starts its retry budget afresh
        create.begin();
        own = null;
        reads.forget();
        int s = step;
        Runnable cancel = live.onEnd(() -> sessionEnded(live));
        if (s == step) { // unless the hook ran at once: the session had ended already
            cancelSessionHook = cancel;
            sendCreate();
        }
    }

    // ------------------------------------------------------------------ 2. enqueue

    /**
     * Sends the create (and its pipelined read) once the session has a create slot free ({@link
     * CreateWindow}): at once, or when a reply frees one. Abandoned before that, nothing is sent.
     */
    private void sendCreate() {
        state = State.ENQUEUEING;
        int s = ++step;
        CreateWindow line = sessions.of(session).creates();
        if (create.takeSlot(line, dir, () -> slotReached(s, line))) {
            sendCreateNow(s, line);
        }
    }

    /** A create slot passed to this acquisition; false (the slot passes on) if it no longer wants it. */
    private synchronized boolean slotReached(int s, CreateWindow line) {
        if (s != step || state.terminal()) {
            return false;
        }
        create.slotReached();
        sendCreateNow(s, line);
        return true;
    }

    /** Sends the create, holding a slot of {@code line} that its reply gives back. */
    private void sendCreateNow(int s, CreateWindow line) {
        ZkSession in = session;
        try {
            create.send(in, line, (attempt, code) -> resentInSlot(s, attempt, code, line),
                    (attempt, code, paths, czxid) -> created(s, in, attempt, code, paths, czxid),
                    readReply(s, false), () -> watchForLoneHold(s, in));
        } catch (RuntimeException e) {
            end(State.FAILED, new CoordinationException("cannot queue in " + dir + ": " + e.getMessage(), e));
        }
    }

    /**
     * The watch a read pipelined behind a create that makes the directory passes, so that a lone
     * grant it decides keeps watching the directory's children ({@link LoneHolds}).
     *
     * @return the watch; null if the step is over
     */
    private synchronized LoneHolds.Watch watchForLoneHold(int s, ZkSession in) {
        if (s != step || state.terminal() || in != session) {
            return null;
        }
        return watching.lone(in, queue.path());
    }

    /**
     * A transaction that would have made a directory found it made by someone else ({@code
     * NODEEXISTS}; the set now knows it exists): the plain create is sent at once in the slot the
     * transaction held, so it keeps its place before this client's creates that waited for the
     * transaction (a slot given back first would pass to them, and this create would queue behind).
     *
     * @return true if sent so (the slot is the new create's), false if the reply is {@link #created}'s
     */
    private synchronized boolean resentInSlot(int s, String attempt, Code code, CreateWindow line) {
        if (code != Code.NODEEXISTS || s != step || state.terminal() || !create.current(attempt)) {
            return false;
        }
        create.answered(attempt);
        create.settled();
        state = State.ENQUEUEING;
        sendCreateNow(++step, line);
        return true;
    }

    /** Reply to a create: whatever the step now is, a node it made is either ours or deleted. */
    private synchronized void created(int s, ZkSession in, String attempt, Code code, List<String> paths, long czxid) {
        create.answered(attempt);
        boolean current = s == step && !state.terminal();
        if (!current) {
            CompletableFuture<Void> cleaning = create.lateReply(in, attempt, code, paths, state.terminal());
            if (state.terminal() && create.current(attempt)) {
                cleaning.whenComplete((v, e) -> cleanedUp.complete(null));
            }
            return;
        }
        switch (code) {
            case OK:
                create.settled();
                own = OwnNodes.of(paths, czxid);
                return; // the pipelined read comes next
            case NONODE:
                create.settled();
                int s2 = ++step;
                queues.createDirectories(in).whenComplete((v, failure) -> {
                    synchronized (this) {
                        if (s2 != step) {
                            return;
                        }
                        if (failure == null) {
                            sendCreate();
                        } else {
                            failOrWait(failure);
                        }
                    }
                });
                return;
            case CONNECTIONLOSS:
            case OPERATIONTIMEOUT:
                // The node may exist: look for it before creating again.
                retryLater(code, this::recover);
                return;
            case SESSIONMOVED:
                retryLater(code, this::recover);
                return;
            case SESSIONEXPIRED:
                awaitSessionEnd();
                return;
            case NOAUTH:
                create.settled();
                end(State.FAILED, new NotAuthorizedException(dir, "create a node in it (needs CREATE)",
                        KeeperException.create(code, dir)));
                return;
            default:
                create.settled();
                end(State.FAILED, new CoordinationException(code + " creating a node in " + dir,
                        KeeperException.create(code, dir)));
        }
    }

    // ------------------------------------------------------------------ 3. recover a lost create reply

    private void recover() {
        if (!QueueDirectory.recoverLostCreates) {
            sendCreate();
            return;
        }
        state = State.RECOVERING;
        int s = ++step;
        ZkSession in = session;
        create.find(in).whenComplete((found, failure) -> {
            synchronized (this) {
                if (s != step || state.terminal()) {
                    return;
                }
                if (failure != null) {
                    failOrRetry(failure, this::recover);
                } else if (found.stat() == null && found.paths().isEmpty()) {
                    sendCreate(); // the lost create never happened
                } else if (found.stat() == null) {
                    // Made, but a node of it went since (deleted by hand): the attempt is void.
                    // Delete what is left (sent first: it lands before the new create) and start
                    // a fresh attempt, whose id no leftover can carry.
                    queues.deleteInBackground(in, found.paths());
                    create.renew();
                    sendCreate();
                } else if (found.stat().getEphemeralOwner() != in.id()) {
                    log.warn("node {} carries our attempt id but belongs to session 0x{}; creating again", found.paths(),
                            Long.toHexString(found.stat().getEphemeralOwner()));
                    sendCreate();
                } else {
                    log.info("recovered node {} after a lost create reply", found.paths());
                    create.settled();
                    own = OwnNodes.of(found.paths(), found.stat().getCzxid());
                    if (queue.guard() != null) {
                        readQueue(); // the directory's settings are checked on a read that shows its czxid
                    } else {
                        decide(found.children());
                    }
                }
            }
        });
    }

    // ------------------------------------------------------------------ 4. decide

    private void readQueue() {
        watching.drop();
        reads.disarm();
        state = State.READING;
        int s = ++step;
        try {
            reads.read(session, null, readReply(s, false));
        } catch (RuntimeException e) {
            end(State.FAILED, new CoordinationException("cannot read " + dir + ": " + e.getMessage(), e));
        }
    }

    private QueueSet.ReadReply readReply(int s, boolean armsQueueWatch) {
        return (code, children, dirCzxid) -> {
            queueWatchArmed(s, armsQueueWatch, code);
            read(s, code, children, dirCzxid);
        };
    }

    private synchronized void queueWatchArmed(int s, boolean armsQueueWatch, Code code) {
        if (armsQueueWatch && s == step && !state.terminal() && code == Code.OK) {
            reads.armed();
        }
    }

    private synchronized void read(int s, Code code, List<List<String>> children, long dirCzxid) {
        if (s != step || state.terminal() || own == null) {
            return; // stale, or the pipelined read of a create that failed
        }
        switch (code) {
            case OK:
                QueueDirectory.DirectoryGuard guard = queue.guard();
                // A directory whose czxid is our node's was made in our create's transaction, with
                // this recipe's own settings: nothing to validate.
                if (guard != null && dirCzxid != guard.validatedCzxid() && dirCzxid != own.czxid()) {
                    validateThenDecide(guard, children);
                } else {
                    decide(children);
                }
                return;
            case NONODE:
                decide(List.of(List.of())); // the (one) directory is gone, and our node with it
                return;
            case SESSIONEXPIRED:
                awaitSessionEnd();
                return;
            default:
                if (Requests.passing(code)) {
                    retryLater(code, this::readQueue);
                } else if (code == Code.NOAUTH) {
                    end(State.FAILED, new NotAuthorizedException(dir, "read its queue (needs READ)",
                            KeeperException.create(code, dir)));
                } else {
                    end(State.FAILED, new CoordinationException(code + " reading " + dir, KeeperException.create(code, dir)));
                }
        }
    }

    /** The directory is not the one last validated: validate it (one read), then decide. */
    private void validateThenDecide(QueueDirectory.DirectoryGuard guard, List<List<String>> children) {
        // A watch the read armed belongs to the step this validation ends: read (and arm) again
        // after it rather than wait on a watch whose events would be taken for stale.
        boolean armed = reads.takeArmed();
        state = State.READING;
        int s = ++step;
        guard.validate(session).whenComplete((v, failure) -> {
            synchronized (this) {
                if (s != step || state.terminal()) {
                    return;
                }
                if (failure == null && armed) {
                    watchQueue();
                } else if (failure == null) {
                    decide(children);
                } else {
                    failOrRetry(failure, this::readQueue);
                }
            }
        });
    }

    private void decide(List<List<String>> children) {
        retries = 0;
        looked = true;
        boolean armed = reads.takeArmed(); // true only for the read that armed a watch of the queue
        EveryQueue.Answer answer = reads.decide(children, own);
        Turn turn = answer.turn();
        if (turn instanceof Turn.Held) {
            grant();
        } else if (turn instanceof Turn.Watch watch) {
            if (oneLook) {
                end(State.ABANDONED, null);
            } else {
                watch(queues.get(answer.queue()).path(), watch);
            }
        } else if (turn instanceof Turn.WatchQueue) {
            if (oneLook) {
                end(State.ABANDONED, null);
            } else if (armed) {
                state = State.WATCHING; // the read that armed the watch said wait: wait for it
            } else {
                watchQueue();
            }
        } else {
            // Our node is gone (deleted by hand, or its session ended unseen): queue again, after
            // deleting the nodes of this attempt that other directories may still hold.
            log.info("node {} left the queue while waiting; queueing again", own.paths().get(answer.queue()));
            if (own.paths().size() > 1 && session.isAlive()) {
                queues.deleteInBackground(session, own.paths());
            }
            own = null;
            cancelSessionHook.run();
            awaitSession();
        }
    }

    // ------------------------------------------------------------------ 5. watch

    private void watch(String watchedDir, Turn.Watch watch) {
        watching.drop();
        state = State.WATCHING;
        int s = ++step;
        String watched = watchedDir + "/" + watch.node().name();
        boolean heldWhenGone = watch.heldWhenGone();
        try {
            watching.node(session, watched, event -> watchFired(s, event, heldWhenGone),
                    (code, promoted) -> watchSet(s, code, promoted, watched));
        } catch (RuntimeException e) {
            end(State.FAILED, new CoordinationException("cannot watch " + watched + ": " + e.getMessage(), e));
        }
    }

    private synchronized void watchSet(int s, Code code, boolean promotedVersion, String watched) {
        if (s != step || state.terminal()) {
            return;
        }
        if (code == Code.OK) {
            if (promotedVersion) {
                readQueue(); // the watched node already announced its promotion: look again
            }
            return; // wait for the watch
        }
        if (code == Code.NONODE) {
            readQueue(); // gone already (no watch was set)
        } else if (code == Code.SESSIONEXPIRED) {
            awaitSessionEnd();
        } else if (Requests.passing(code)) {
            retryLater(code, this::readQueue);
        } else if (code == Code.NOAUTH) {
            end(State.FAILED, new NotAuthorizedException(watched, "read it, the node this acquisition waits behind"
                    + " (needs READ)", KeeperException.create(code, watched)));
        } else {
            end(State.FAILED, new CoordinationException(code + " watching in " + dir, KeeperException.create(code, dir)));
        }
    }

    private synchronized void watchFired(int s, WatchedEvent event, boolean heldWhenGone) {
        if (s != step || state.terminal() || event.getType() == Watcher.Event.EventType.None) {
            return; // connection events: the client's state machine decides what they mean
        }
        watching.fired(); // a watch fires once, and told us it left
        if (event.getType() == Watcher.Event.EventType.NodeDeleted && heldWhenGone) {
            reads.heldWhenGone(event.getPath(), own);
            grant();
        } else {
            readQueue();
        }
    }

    /**
     * {@link Turn.WatchQueue}: reads the queue again with a watch of the directory's children, and
     * decides on that read; if it still says wait, the watch is armed and the acquisition waits for
     * it. Costs one request beyond the read that led here, only for the waiter the rule gives it to.
     */
    private void watchQueue() {
        watching.drop();
        state = State.READING;
        int s = ++step;
        SharedWatches.Subscription sub = watching.queue(session, queue.path(), event -> queueChanged(s, event));
        try {
            reads.read(session, sub, readReply(s, true));
        } catch (RuntimeException e) {
            sub.answered(Code.SYSTEMERROR); // nothing was sent
            end(State.FAILED, new CoordinationException("cannot watch " + dir + ": " + e.getMessage(), e));
        }
    }

    private synchronized void queueChanged(int s, WatchedEvent event) {
        if (s != step || state.terminal() || event.getType() == Watcher.Event.EventType.None) {
            return;
        }
        readQueue();
    }

    // ------------------------------------------------------------------ 6. grant, and the ends

    private void grant() {
        if (!session.isAlive()) {
            awaitSessionEnd(); // the node goes with the session; queue again in the next
            return;
        }
        state = State.GRANTED;
        ++step;
        queues.left();
        cancelSessionHook.run();
        LoneHolds.Watch lone = watching.takeLone();
        List<String> removableDirs = reads.removableDirs();
        if (!removableDirs.isEmpty() && queues.size() == 1) {
            // Its release may remove the directory: it keeps the children watch its granting read
            // set, if any, to learn of anyone queueing meanwhile (LoneHolds).
            sessions.of(session).loneHolds().held(own.paths().get(0), own.czxid(), lone);
        } else if (lone != null) {
            lone.cancel();
        }
        watching.drop(); // a watch of the queue that the granting read armed
        if (reads.successorMayWatch() && rule.announcesPromotion()) {
            queue.announceInBackground(session, own.paths().get(0), data);
        }
        result.complete(new Grant(session, own.paths(), own.first(), own.czxid(), removableDirs));
    }

    /** Session-end hook: the node went with the session; queue again in the next. */
    private synchronized void sessionEnded(ZkSession ended) {
        if (state.terminal() || session != ended) {
            return;
        }
        own = null;
        create.settled();
        watching.drop(); // the watch went with the session
        awaitSession(); // fails with IllegalStateException if the client closed
    }

    private void awaitSessionEnd() {
        state = State.AWAITING_SESSION_END;
        ++step;
    }

    /** Ends the acquisition; deletes its node (or looks for it) in the background. */
    private void end(State terminal, Throwable failure) {
        if (state.terminal()) {
            return;
        }
        state = terminal;
        ++step;
        queues.left();
        cancelSessionHook.run();
        cancelSessionWait.run();
        cancelSessionWait = () -> { };
        create.leaveLine();
        watching.drop();
        CompletableFuture<Void> cleaning = CompletableFuture.completedFuture(null);
        if (session != null && session.isAlive()) {
            if (own != null) {
                cleaning = queues.leave(session, own.paths(), reads.lastRead());
            } else {
                // A create whose reply was lost may have made a node: found by its attempt id. A
                // create still in flight: its reply deletes its node and completes cleanedUp (null).
                cleaning = create.leftBehind(session);
            }
        }
        if (cleaning != null) {
            cleaning.whenComplete((v, e) -> cleanedUp.complete(null));
        }
        if (failure == null) {
            result.complete(null);
        } else {
            result.completeExceptionally(failure);
        }
    }

    private void failOrWait(Throwable failure) {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (Requests.codeOf(failure) == Code.SESSIONEXPIRED || cause instanceof io.zkcoord.SessionLostException) {
            awaitSessionEnd();
        } else if (cause instanceof KeeperException.NoAuthException refused) {
            String path = refused.getPath() != null ? refused.getPath() : dir;
            end(State.FAILED, new NotAuthorizedException(path, "read it (needs READ)", refused));
        } else {
            end(State.FAILED, failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure);
        }
    }

    private void failOrRetry(Throwable failure, Runnable again) {
        Code code = Requests.codeOf(failure);
        if (code != null && Requests.passing(code)) {
            retryLater(code, again);
        } else {
            failOrWait(failure);
        }
    }

    /** Repeats {@code again} after the retry policy's delay, or fails once the policy gives up. */
    private void retryLater(Code code, Runnable again) {
        long now = System.nanoTime();
        if (retries == 0) {
            failingSince = now;
        }
        Duration elapsed = Duration.ofNanos(now - failingSince);
        Optional<Duration> delay = queue.services().retryPolicy().retryDelay(retries, elapsed);
        if (delay.isEmpty()) {
            end(State.FAILED, queue.gaveUp(dir, retries + 1, elapsed, KeeperException.create(code, dir)));
            return;
        }
        retries++;
        int s = ++step;
        log.debug("{} in {}; retry {} in {} ms", code, dir, retries, delay.get().toMillis());
        queue.schedule(() -> {
            synchronized (this) {
                if (s == step && !state.terminal()) {
                    again.run();
                }
            }
        }, delay.get().toMillis());
    }

    @Override
    public synchronized String toString() {
        return "Acquisition[" + dir + ", " + create.kind() + ", " + state + (own == null ? "" : ", " + own.paths()) + "]";
    }
}
