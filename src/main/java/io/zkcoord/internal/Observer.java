package io.zkcoord.internal;

import io.zkcoord.ConnectionState;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.observe.WaitOutcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports one client's waits and holds to its {@link CoordinationListener}s and as Flight Recorder
 * events ({@link LockWaitEvent}, {@link LockHoldEvent}; always, they cost nothing unless recording).
 * The recipes call it at a few points: {@link #started} when an acquisition begins, then on the
 * returned {@link Wait} either {@link Wait#granting} + {@link Held#granted()}, or {@link
 * Wait#ended}/{@link Wait#failed}; later {@link Held#released()} or {@link Held#lost()}.
 *
 * <p>Thread-safe. Each {@link Wait} and {@link Held} reports at most once whatever calls race: the
 * first of granted/ended ends a wait, the first of released/lost ends a hold. Listener calls run on
 * the calling thread, except losses, which run on the client's callback thread; whatever a listener
 * throws is logged.
 */
public final class Observer {

    private static final Logger log = LoggerFactory.getLogger(Observer.class);
    /**
     * Asked whether a recording wants the events ({@link jdk.jfr.Event#isEnabled()} reads the event
     * type's setting, not the instance): without one, a wait or hold makes no event objects at all.
     * A wait or hold that began before a recording started is not recorded, as with any JFR event
     * that was not begun.
     */
    private static final LockWaitEvent WAIT_PROBE = new LockWaitEvent();
    private static final LockHoldEvent HOLD_PROBE = new LockHoldEvent();
    private static final LockWaitEvent[] NO_WAIT_EVENTS = new LockWaitEvent[0];
    private static final LockHoldEvent[] NO_HOLD_EVENTS = new LockHoldEvent[0];

    private final String client;
    private final Executor callbacks;
    private final List<CoordinationListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * @param client the client's name, for messages and events
     * @param callbacks the client's callback executor: losses are reported there
     */
    public Observer(String client, Executor callbacks) {
        this.client = client;
        this.callbacks = callbacks;
    }

    public void add(CoordinationListener listener) {
        listeners.add(listener);
    }

    public void remove(CoordinationListener listener) {
        listeners.remove(listener);
    }

    /** An acquisition begins now. */
    public Wait started(CoordinationEvent event) {
        Wait wait = new Wait(event);
        tell(l -> l.acquisitionStarted(event), "acquisitionStarted", event);
        return wait;
    }

    /** Called on the thread that tells connection listeners. */
    public void sessionStateChanged(ConnectionState state) {
        tell(l -> l.sessionStateChanged(state), "sessionStateChanged", state);
    }

    private void tell(Consumer<CoordinationListener> call, String what, Object about) {
        for (CoordinationListener l : listeners) {
            try {
                call.accept(l);
            } catch (Throwable t) {
                log.error("{}: coordination listener {} failed in {} of {}", client, l, what, about, t);
            }
        }
    }

    /** One acquisition. Ends once: granted, or ended without a hold. */
    public final class Wait {

        private final CoordinationEvent event;
        private final long startNanos = System.nanoTime();
        private final LockWaitEvent[] flight;
        private final AtomicBoolean over = new AtomicBoolean();

        private Wait(CoordinationEvent event) {
            this.event = event;
            this.flight = WAIT_PROBE.isEnabled() ? new LockWaitEvent[event.paths().size()] : NO_WAIT_EVENTS;
            for (int i = 0; i < flight.length; i++) {
                flight[i] = new LockWaitEvent();
                flight[i].begin();
            }
        }

        /**
         * A grant is about to be handed out; it counts once {@link Held#granted()} is called (a grant
         * whose session ends first is never granted: the wait goes on, and the returned object is
         * simply dropped).
         */
        public Held granting(long fencingToken) {
            return new Held(this, fencingToken);
        }

        /** The time ran out. */
        public void timedOut() {
            ended(WaitOutcome.TIMED_OUT);
        }

        /** The acquisition threw {@code failure}: an interrupt is {@link WaitOutcome#ABANDONED}, the rest {@link WaitOutcome#FAILED}. */
        public void failed(Throwable failure) {
            ended(failure instanceof InterruptedException ? WaitOutcome.ABANDONED : WaitOutcome.FAILED);
        }

        /** The wait ended without a hold; nothing if it ended before. */
        public void ended(WaitOutcome outcome) {
            if (over.compareAndSet(false, true)) {
                Duration waited = Duration.ofNanos(System.nanoTime() - startNanos);
                commit(outcome, 0);
                tell(l -> l.acquisitionEnded(event, waited, outcome), "acquisitionEnded", event);
            }
        }

        /** @return true if this call ended the wait with a grant */
        private boolean grant(long fencingToken) {
            if (!over.compareAndSet(false, true)) {
                return false;
            }
            Duration waited = Duration.ofNanos(System.nanoTime() - startNanos);
            commit(WaitOutcome.GRANTED, fencingToken);
            tell(l -> l.acquisitionGranted(event, waited, fencingToken), "acquisitionGranted", event);
            return true;
        }

        private void commit(WaitOutcome outcome, long fencingToken) {
            for (int i = 0; i < flight.length; i++) {
                LockWaitEvent e = flight[i];
                e.end();
                if (e.shouldCommit()) {
                    e.path = event.paths().get(i);
                    e.recipe = event.recipe().tag();
                    e.holder = event.holder().name();
                    e.outcome = outcome.tag();
                    e.fencingToken = fencingToken;
                    e.client = client;
                    e.commit();
                }
            }
        }
    }

    /**
     * One hold. {@code PENDING -> HELD -> ENDED}, or {@code PENDING -> LOST_EARLY -> ENDED} when the
     * loss is seen before {@link #granted()} ran (the grant is then reported, and the loss after it).
     * A hold left {@code PENDING} (its session ended before the recipe could grant it) reports nothing.
     */
    public final class Held {

        private enum State { PENDING, HELD, LOST_EARLY, ENDED }

        private final Wait wait;
        private final long fencingToken;
        private final AtomicReference<State> state = new AtomicReference<>(State.PENDING);
        private volatile long grantedNanos;
        private volatile LockHoldEvent[] flight;

        private Held(Wait wait, long fencingToken) {
            this.wait = wait;
            this.fencingToken = fencingToken;
        }

        /**
         * The recipe granted the hold: ends the wait and starts the hold. If the wait ended before
         * (an asynchronous acquisition abandoned at that moment), the hold stays silent: its release
         * is not reported either.
         */
        public void granted() {
            // The hold starts now, before the listeners told of the grant run (they may be slow).
            long now = System.nanoTime();
            LockHoldEvent[] events = HOLD_PROBE.isEnabled() ? new LockHoldEvent[wait.event.paths().size()]
                    : NO_HOLD_EVENTS;
            for (int i = 0; i < events.length; i++) {
                events[i] = new LockHoldEvent();
                events[i].begin();
            }
            if (!wait.grant(fencingToken)) {
                state.set(State.ENDED);
                return;
            }
            flight = events;
            grantedNanos = now;
            if (!state.compareAndSet(State.PENDING, State.HELD) && state.compareAndSet(State.LOST_EARLY, State.ENDED)) {
                reportLoss();
            }
        }

        /** The hold ended on purpose; nothing if it was not held or ended before. */
        public void released() {
            if (state.compareAndSet(State.HELD, State.ENDED)) {
                Duration held = Duration.ofNanos(System.nanoTime() - grantedNanos);
                commit(false);
                tell(l -> l.released(wait.event, held, fencingToken), "released", wait.event);
            }
        }

        /** The hold went with its session; reported on the client's callback thread. */
        public void lost() {
            if (state.compareAndSet(State.HELD, State.ENDED)) {
                reportLoss();
            } else {
                state.compareAndSet(State.PENDING, State.LOST_EARLY); // granted() reports it
            }
        }

        /**
         * As {@link #lost()}, told on the calling thread: for a caller already on the client's
         * callback thread whose next report must come after this one (an election's revoke, then
         * its next wait).
         */
        public void lostInOrder() {
            if (state.compareAndSet(State.HELD, State.ENDED)) {
                Duration held = Duration.ofNanos(System.nanoTime() - grantedNanos);
                commit(true);
                tell(l -> l.lost(wait.event, held, fencingToken), "lost", wait.event);
            } else {
                state.compareAndSet(State.PENDING, State.LOST_EARLY); // granted() reports it
            }
        }

        private void reportLoss() {
            Duration held = Duration.ofNanos(System.nanoTime() - grantedNanos);
            commit(true);
            callbacks.execute(() -> tell(l -> l.lost(wait.event, held, fencingToken), "lost", wait.event));
        }

        private void commit(boolean lost) {
            LockHoldEvent[] events = flight;
            for (int i = 0; i < events.length; i++) {
                LockHoldEvent e = events[i];
                e.end();
                if (e.shouldCommit()) {
                    e.path = wait.event.paths().get(i);
                    e.recipe = wait.event.recipe().tag();
                    e.holder = wait.event.holder().name();
                    e.token = fencingToken;
                    e.lost = lost;
                    e.client = client;
                    e.commit();
                }
            }
        }
    }
}
