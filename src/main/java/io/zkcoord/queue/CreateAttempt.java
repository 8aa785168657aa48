package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The create of one {@link Acquisition}'s nodes (steps 2 and 3 of its protocol): the attempt id
 * its nodes are named by, its place in the session's line for a create slot ({@link
 * CreateWindow}), whether a create of it may have made a node nobody has seen yet, and, after a
 * lost reply, the search for that node by the attempt id. It sends and it finds; what a reply means
 * for the acquisition is the acquisition's to decide.
 *
 * <p>Its one invariant: while a create of the current attempt may have made a node unseen ({@link
 * #leftBehind}), that node is deleted by whoever learns of it: the create's reply when it comes
 * ({@link #lateReply}), or a search by the attempt id.
 *
 * <p>Not thread-safe: one acquisition owns it and uses it under its own monitor only.
 */
final class CreateAttempt {

    private static final Logger log = LoggerFactory.getLogger(CreateAttempt.class);

    private final QueueSet queues;
    private final String kind;
    private final byte[] data;

    /** Name prefix of the current attempt ({@code kind-attemptId-}). */
    private String prefix;
    /** True once a create of the current attempt was sent and its node may exist unseen. */
    private boolean unsettled;
    /** True while the reply to the current attempt's create is awaited: that reply settles it. */
    private boolean inFlight;
    /** Our place in the session's line for a create slot, and that line; null unless waiting in it. */
    private CreateWindow.Ticket ticket;
    private CreateWindow line;
    /** True once a thread blocks on the acquisition: its creates go in the blocked turns. */
    private boolean blockedOn;

    /** The reply to a create of attempt {@code attempt}: the nodes made (one per directory) and their czxid. */
    interface Created {
        void created(String attempt, Code code, List<String> paths, long czxid);
    }

    /**
     * What a search by attempt id found after a lost create reply.
     *
     * @param children every directory's children, synced
     * @param paths the attempt's nodes found (in some directories, all, or none)
     * @param stat the first node's stat if found in every directory and still there; else null
     */
    record Found(List<List<String>> children, List<String> paths, Stat stat) {
    }

    CreateAttempt(QueueSet queues, String kind, byte[] data) {
        this.queues = queues;
        this.kind = kind;
        this.data = data;
    }

    /** @return the kind of node this acquisition makes (its name's first part) */
    String kind() {
        return kind;
    }

    /** Starts a new attempt (a new session): a new attempt id, nothing sent yet. */
    void begin() {
        prefix = queues.naming().newPrefix(kind);
        unsettled = false;
        inFlight = false;
    }

    /**
     * A new attempt id for the attempt that follows a void one (its nodes found in some directories
     * only, or deleted by hand): no leftover of the old attempt can carry the new id.
     */
    void renew() {
        prefix = queues.naming().newPrefix(kind);
    }

    /** @return true if {@code attempt} is the current attempt's prefix */
    boolean current(String attempt) {
        return attempt.equals(prefix);
    }

    /** The acquisition is waited on by a thread: its create, if in line, takes its turn among such ones. */
    void waitedOn() {
        blockedOn = true;
        if (ticket != null) {
            line.waitedOn(ticket);
        }
    }

    /**
     * Asks {@code window} for a create slot for {@code dir}.
     *
     * @param sender called when a slot passes to this attempt later; answers false to pass it on
     * @return true if a slot is this attempt's now (send at once); false if it waits in line
     */
    boolean takeSlot(CreateWindow window, String dir, BooleanSupplier sender) {
        CreateWindow.Ticket t = window.take(dir, blockedOn, sender);
        if (t == null) {
            return true;
        }
        ticket = t;
        line = window;
        return false;
    }

    /** A slot passed to this attempt: it is out of the line. */
    void slotReached() {
        ticket = null;
        line = null;
    }

    /** Leaves the line for a create slot, if in it: the create will not be sent. */
    void leaveLine() {
        if (ticket != null) {
            line.withdraw(ticket);
            ticket = null;
            line = null;
        }
    }

    /**
     * Sends the current attempt's create and, pipelined behind it, the read of every queue ({@link
     * QueueSet#enqueue}), holding a slot of {@code window} that the create's reply gives back:
     * answered after the create, the read sees the node. The slot is given back once, by the reply
     * (before {@code created} runs, so it may pass to another acquisition), unless {@code
     * resentInSlot} answers that the acquisition sent a create again in it.
     *
     * @throws RuntimeException if the client refused the request (the slot is given back and the
     *     attempt is as before)
     */
    void send(ZkSession in, CreateWindow window, BiPredicate<String, Code> resentInSlot, Created created,
            QueueSet.ReadReply read, Supplier<LoneHolds.Watch> loneWatch) {
        String attempt = prefix;
        AtomicBoolean holding = new AtomicBoolean(true);
        Runnable giveBack = () -> {
            if (holding.compareAndSet(true, false)) {
                window.release();
            }
        };
        unsettled = true;
        inFlight = true;
        try {
            queues.enqueue(in, attempt, data, (code, paths, czxid) -> {
                if (!resentInSlot.test(attempt, code)) {
                    giveBack.run(); // outside the acquisition's lock: the slot may pass to another
                    created.created(attempt, code, paths, czxid);
                }
            }, read, loneWatch);
        } catch (RuntimeException e) {
            giveBack.run();
            unsettled = false;
            inFlight = false;
            throw e;
        }
    }

    /** A reply to a create of {@code attempt} came: if it is the current attempt's, none is awaited any more. */
    void answered(String attempt) {
        if (current(attempt)) {
            inFlight = false;
        }
    }

    /** Whatever the current attempt's creates did is known (a node seen, or none made, or it went with its session). */
    void settled() {
        unsettled = false;
    }

    /**
     * An acquisition that ends knowing no node of its own: what becomes of a node its create may
     * have made.
     *
     * @return the search by attempt id that deletes it (a create whose reply was lost); done at once
     *     if nothing can have been made; null if the create's reply is still awaited (that reply
     *     deletes its node: {@link #lateReply})
     */
    CompletableFuture<Void> leftBehind(ZkSession session) {
        if (unsettled && !inFlight) {
            return queues.forgetAttempt(session, prefix);
        }
        if (inFlight) {
            return null;
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The reply to a create of a step that is over: a node it made belongs to nobody, and is
     * deleted; a create whose outcome is unknown is searched for by its attempt id if the
     * acquisition has {@code ended}.
     *
     * @return completes once that is done
     */
    CompletableFuture<Void> lateReply(ZkSession in, String attempt, Code code, List<String> paths, boolean ended) {
        if (code == Code.OK && in.isAlive()) {
            return queues.deleteInBackground(in, paths); // made for an attempt nobody waits for any more
        }
        if (Requests.outcomeUnknown(code) && ended) {
            return queues.forgetAttempt(in, attempt);
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * After a lost create reply: {@code sync}s, reads every directory, and looks for the current
     * attempt's nodes. One transaction made every node of the attempt, or none: found in every
     * directory, the first one's stat is read too (whose session made it, its czxid).
     */
    CompletableFuture<Found> find(ZkSession in) {
        String attempt = prefix;
        return queues.syncedRead(in).thenCompose(children -> {
            List<String> paths = queues.find(children, attempt);
            if (paths.size() == queues.size()) {
                return Requests.exists(in, paths.get(0)).thenApply(stat -> new Found(children, paths, stat));
            }
            if (!paths.isEmpty()) {
                log.warn("nodes {} of attempt {} are not in every directory of {}", paths, attempt, queues);
            }
            return CompletableFuture.completedFuture(new Found(children, paths, null));
        });
    }
}
