package io.zkcoord.queue;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many queue-node creates one session has in flight: at most {@link #SIZE}; the others wait
 * here, in the order they asked, and are sent as replies come back.
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
 * <p>Thread-safe. A sender is never run under this window's lock.
 */
final class CreateWindow {

    private static final Logger log = LoggerFactory.getLogger(CreateWindow.class);

    /** Creates one session may have in flight at once. */
    static final int SIZE = 32;

    // Guarded by this.
    private int inFlight;
    private final LinkedHashSet<Ticket> waiting = new LinkedHashSet<>();

    /** A place in line, for {@link #withdraw}. */
    static final class Ticket {
        private final BooleanSupplier sender;

        private Ticket(BooleanSupplier sender) {
            this.sender = sender;
        }
    }

    /**
     * Takes a slot now if one is free and nobody waits for one; otherwise queues {@code sender},
     * which is run (on the thread of a reply, never under this window's lock) once a slot passes to
     * it. A sender returns true if it sent its create (it then owns the slot, and gives it back with
     * {@link #release()} when the reply arrives), false if it no longer wants to (the slot passes on).
     *
     * @return null if the slot is taken now: the caller sends at once and owns the slot; otherwise
     *     the ticket of its place in line
     */
    synchronized Ticket take(BooleanSupplier sender) {
        if (inFlight < SIZE && waiting.isEmpty()) {
            inFlight++;
            return null;
        }
        Ticket ticket = new Ticket(sender);
        waiting.add(ticket);
        return ticket;
    }

    /** Leaves the line, if still in it: the sender will not run. */
    synchronized void withdraw(Ticket ticket) {
        waiting.remove(ticket);
    }

    /** Gives a slot back (the create's reply arrived, or it was never sent): it passes to the first in line. */
    void release() {
        for (;;) {
            Ticket next;
            synchronized (this) {
                Iterator<Ticket> first = waiting.iterator();
                if (!first.hasNext()) {
                    inFlight--;
                    return;
                }
                next = first.next();
                first.remove();
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

    /** @return creates in flight now, for tests and messages */
    synchronized int inFlight() {
        return inFlight;
    }
}
