package io.zkcoord.election;

import io.zkcoord.internal.Observer;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.Holder;
import io.zkcoord.observe.Recipe;
import io.zkcoord.observe.WaitOutcome;

/**
 * Reports one participant to the client's coordination listeners and Flight Recorder: a wait from
 * {@code start()} (or the last {@code revoked}) to {@code elected}, and a hold from {@code elected}
 * to {@code revoked} (lost for {@link RevokeReason#LOST}, released otherwise).
 *
 * <p>Not thread-safe: called only from the election's in-order listener tasks, where {@code elected}
 * and {@code revoked} strictly alternate.
 */
final class LeadershipObservation {

    private final Observer observer;
    private final CoordinationEvent event;
    /** The wait for leadership under way, or null. */
    private Observer.Wait waiting;
    /** The leadership held now, or null. */
    private Observer.Held leading;

    LeadershipObservation(Observer observer, String path) {
        this.observer = observer;
        this.event = CoordinationEvent.of(Recipe.ELECTION, path, Holder.PARTICIPANT);
    }

    /** The participant waits to lead (joined, or revoked and not closed). */
    void waiting() {
        if (waiting == null && leading == null) {
            waiting = observer.started(event);
        }
    }

    void elected(long epoch) {
        waiting();
        leading = waiting.granting(epoch);
        waiting = null;
        leading.granted();
    }

    void revoked(RevokeReason reason) {
        if (leading != null) {
            if (reason == RevokeReason.LOST) {
                leading.lostInOrder(); // before the next wait's start, which waiting() tells below
            } else {
                leading.released();
            }
            leading = null;
        }
        if (reason != RevokeReason.CLOSED) {
            waiting();
        }
    }

    /** The participant left the election: a wait under way is abandoned. */
    void closed() {
        if (waiting != null) {
            waiting.ended(WaitOutcome.ABANDONED);
            waiting = null;
        }
    }
}
