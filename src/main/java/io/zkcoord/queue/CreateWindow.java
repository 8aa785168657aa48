package io.zkcoord.queue;

import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many queue-node creates one session has in flight: at most {@link #SIZE}; the others wait
 * here and are sent as replies come back.
 *
 * <p>Why: ZooKeeper's client sends whatever it is given, and an asynchronous create cannot be
 * taken back once given. Without a bound, thousands of acquisitions that are abandoned a moment
 * after they start (cancelled futures, short {@code tryLock}s) sit in the client's outgoing queue
 * and reach the ensemble seconds later, each making a node, then its deletion, then reading a
 * queue swollen by the others. With the bound, an acquisition abandoned while it waits here
 * leaves without a request sent, and after the last abandon the ensemble makes at most {@link
 * #SIZE} more nodes, each deleted as its reply arrives. The bound does not slow a client down in
 * practice: {@link #SIZE} creates per round trip is more than an ensemble writes.
 *
 * <h2>Who gets a slot that frees</h2>
 * The waiting creates are kept by path (an acquisition's directories):
 * <ol>
 *   <li>The creates of one path are sent in the order they were asked, always.
 *   <li>The paths take turns: a slot goes to the first path in turn, which then goes to the back
 *       of the turns if it has more waiting. A backlog of creates on one path thus delays another
 *       path's create by one slot per turn, not by the backlog's length.
 *   <li>A path with a create that a thread is blocked on ({@link #waitedOn}: {@code lock()}, a
 *       timed {@code tryLock}, {@code acquire()}, a {@code get()} of an {@code acquireAsync()}
 *       future) takes its turn among such paths, before the
 *       paths whose creates only futures wait for ({@code acquireAsync()}); while both kinds wait
 *       they alternate, so a backlog of futures still gets every other slot. A blocked caller is
 *       thus sent within two slots of the next free one, plus two per other path that a blocked
 *       caller waits on ahead of it, however many futures wait: each thread blocks on one
 *       acquisition at a time, so this lane stays as short as the number of blocked threads.
 * </ol>
 *
 * <p>Thread-safe. A sender is never run under this window's lock.
 */
final class CreateWindow {

    private static final Logger log = LoggerFactory.getLogger(CreateWindow.class);

    /** Creates one session may have in flight at once. */
    static final int SIZE = 32;

    // Guarded by this.
    private int inFlight;
    private int waiting;
    private final Map<Object, PathLine> lines = new HashMap<>();
    /** The turns of the paths with a create a thread is blocked on, and of the others. */
    private final LinkedHashSet<PathLine> blockedTurns = new LinkedHashSet<>();
    private final LinkedHashSet<PathLine> futureTurns = new LinkedHashSet<>();
    /** True if the last slot passed went to a path of {@link #blockedTurns}: the next goes to the other kind. */
    private boolean lastToBlocked;

    /** A place in line, for {@link #withdraw} and {@link #waitedOn}. */
    static final class Ticket {
        private final BooleanSupplier sender;
        private final PathLine line;
        // Guarded by the window.
        private boolean blocked;

        private Ticket(BooleanSupplier sender, PathLine line, boolean blocked) {
            this.sender = sender;
            this.line = line;
            this.blocked = blocked;
        }
    }

    /** The creates of one path waiting for a slot, in the order asked. Guarded by the window. */
    private static final class PathLine {
        private final Object path;
        private final LinkedHashSet<Ticket> tickets = new LinkedHashSet<>();
        /** How many of {@link #tickets} a thread is blocked on. */
        private int blocked;

        private PathLine(Object path) {
            this.path = path;
        }
    }

    /**
     * Takes a slot now if one is free and nobody waits for one; otherwise queues {@code sender},
     * which is run (on the thread of a reply, never under this window's lock) once a slot passes to
     * it. A sender returns true if it sent its create (it then owns the slot, and gives it back with
     * {@link #release()} when the reply arrives), false if it no longer wants to (the slot passes on).
     *
     * @param path the path the create is for (any value with equals: the acquisition's directories)
     * @param blocked whether a thread is blocked on it already (see {@link #waitedOn})
     * @return null if the slot is taken now: the caller sends at once and owns the slot; otherwise
     *     the ticket of its place in line
     */
    synchronized Ticket take(Object path, boolean blocked, BooleanSupplier sender) {
        if (inFlight < SIZE && waiting == 0) {
            inFlight++;
            return null;
        }
        PathLine line = lines.computeIfAbsent(path, PathLine::new);
        Ticket ticket = new Ticket(sender, line, false);
        if (line.tickets.isEmpty()) {
            futureTurns.add(line);
        }
        line.tickets.add(ticket);
        waiting++;
        if (blocked) {
            markBlocked(ticket);
        }
        return ticket;
    }

    /**
     * A thread is now blocked on this create (a blocking {@code lock()} waits for it): if it is
     * still in line, its path takes its turns among the paths that blocked threads wait on.
     */
    synchronized void waitedOn(Ticket ticket) {
        if (!ticket.blocked && ticket.line.tickets.contains(ticket)) {
            markBlocked(ticket);
        }
    }

    private void markBlocked(Ticket ticket) {
        ticket.blocked = true;
        PathLine line = ticket.line;
        if (line.blocked++ == 0) {
            futureTurns.remove(line);
            blockedTurns.add(line);
        }
    }

    /** Leaves the line, if still in it: the sender will not run. */
    synchronized void withdraw(Ticket ticket) {
        PathLine line = ticket.line;
        if (!line.tickets.remove(ticket)) {
            return;
        }
        waiting--;
        if (ticket.blocked) {
            line.blocked--;
        }
        if (line.tickets.isEmpty()) {
            blockedTurns.remove(line);
            futureTurns.remove(line);
            lines.remove(line.path);
        } else if (line.blocked == 0 && blockedTurns.remove(line)) {
            futureTurns.add(line); // nobody blocks on its creates any more
        }
    }

    /** Gives a slot back (the create's reply arrived, or it was never sent): it passes to the next in turn. */
    void release() {
        for (;;) {
            Ticket next;
            synchronized (this) {
                next = next();
                if (next == null) {
                    inFlight--;
                    return;
                }
            }
            boolean sent;
            try {
                sent = next.sender.getAsBoolean();
            } catch (RuntimeException e) {
                log.error("a queued create failed to start; its slot passes on", e);
                sent = false;
            }
            if (sent) {
                return; // the slot is its now
            }
        }
    }

    /** @return the first create of the path whose turn it is, taken out of line; null if none waits */
    private Ticket next() {
        LinkedHashSet<PathLine> turns;
        if (blockedTurns.isEmpty()) {
            turns = futureTurns;
        } else if (futureTurns.isEmpty()) {
            turns = blockedTurns;
        } else {
            turns = lastToBlocked ? futureTurns : blockedTurns;
        }
        Iterator<PathLine> first = turns.iterator();
        if (!first.hasNext()) {
            return null;
        }
        lastToBlocked = turns == blockedTurns;
        PathLine line = first.next();
        first.remove(); // to the back of the turns, below, if it has more waiting
        Iterator<Ticket> head = line.tickets.iterator();
        Ticket ticket = head.next();
        head.remove();
        waiting--;
        if (ticket.blocked) {
            line.blocked--;
        }
        if (line.tickets.isEmpty()) {
            lines.remove(line.path);
        } else if (line.blocked > 0) {
            blockedTurns.add(line);
        } else {
            futureTurns.add(line);
        }
        return ticket;
    }

    /** @return creates in flight now, for tests and messages */
    synchronized int inFlight() {
        return inFlight;
    }

    /** @return creates waiting for a slot that a thread is blocked on, for tests */
    synchronized int blockedWaiting() {
        int n = 0;
        for (PathLine line : blockedTurns) {
            n += line.blocked;
        }
        return n;
    }
}
