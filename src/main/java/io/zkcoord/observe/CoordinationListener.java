package io.zkcoord.observe;

import io.zkcoord.ConnectionState;
import java.time.Duration;

/**
 * Sees what the recipes of one {@code ZkClient} do: acquisitions started and how they ended, holds
 * released or lost, and the session's state. For metrics, tracing or logs; register with {@code
 * ZkClient.addCoordinationListener}. Every method has an empty default: implement the ones you need.
 *
 * <h2>What is reported</h2>
 * For every lock, permit, lease or leadership that a thread or object asks for:
 * <pre>
 *   acquisitionStarted ──► acquisitionGranted ──► released | lost
 *          │
 *          └────────────► acquisitionEnded (TIMED_OUT, ABANDONED, FAILED)
 * </pre>
 * Each acquisition is reported once, whatever happens inside it (a node that went with its session
 * and was queued again is part of the same wait). A reentrant {@code lock()} of a thread that already
 * holds the lock is not an acquisition, and only its last {@code unlock()} is a release. A {@code
 * ZkLeaderElection} participant waits from {@code start()} (or its last {@code revoked}) to {@code
 * elected}; its hold ends with {@code revoked}: {@code lost} for {@code RevokeReason.LOST}, {@code
 * released} otherwise (a step-down on {@code SUSPENDED} included). The same {@link CoordinationEvent}
 * value describes an acquisition and the hold it leads to.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@code acquisitionStarted}, {@code acquisitionGranted} and {@code acquisitionEnded} of
 *       blocking calls ({@code lock}, {@code tryLock}, {@code acquire}, {@code tryAcquire}) run on the
 *       calling thread, inline: a slow listener delays the caller.</li>
 *   <li>{@code released} runs on the thread that releases ({@code unlock}, {@code ZkLease.release}).</li>
 *   <li>{@code acquireAsync}'s outcome, {@code lost}, and every call about elections run on the client's
 *       callback thread (the one that runs loss listeners); {@code sessionStateChanged} runs on the
 *       thread that tells {@code ConnectionListener}s.</li>
 * </ul>
 * Never on ZooKeeper's event thread. Still, a listener should return quickly and never block: it
 * runs on the paths that take and free locks. Calls about one acquisition come in order; calls about
 * different acquisitions may come concurrently, from several threads: implementations must be
 * thread-safe. Whatever a listener throws (any {@link Throwable}) is logged and ignored: the lock
 * and the other listeners go on as if it had returned.
 */
public interface CoordinationListener {

    /**
     * An acquisition was asked for and starts waiting.
     *
     * @param event what is asked for
     */
    default void acquisitionStarted(CoordinationEvent event) {
    }

    /**
     * The acquisition succeeded: the hold begins.
     *
     * @param event what was asked for
     * @param waited from {@link #acquisitionStarted} to now
     * @param fencingToken the hold's fencing token (for elections: the epoch)
     */
    default void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
    }

    /**
     * The acquisition ended without a hold.
     *
     * @param event what was asked for
     * @param waited from {@link #acquisitionStarted} to now
     * @param outcome why: {@link WaitOutcome#TIMED_OUT}, {@link WaitOutcome#ABANDONED} or {@link WaitOutcome#FAILED}
     */
    default void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
    }

    /**
     * A hold ended on purpose: released, unlocked, closed, or (elections) revoked for any reason but
     * a lost session.
     *
     * @param event what was held
     * @param held from {@link #acquisitionGranted} to now
     * @param fencingToken the hold's fencing token
     */
    default void released(CoordinationEvent event, Duration held, long fencingToken) {
    }

    /**
     * A hold was lost with its session (expired, or presumed so after a partition, or the client
     * closed while holding). Called once per hold, about when the recipe's own loss listeners are told.
     *
     * @param event what was held
     * @param held from {@link #acquisitionGranted} to the moment the loss was seen
     * @param fencingToken the lost hold's fencing token
     */
    default void lost(CoordinationEvent event, Duration held, long fencingToken) {
    }

    /**
     * The client's session changed state, as {@code ConnectionListener}s see it (the transitions
     * after the listener was added).
     *
     * @param state the state the client has just entered
     */
    default void sessionStateChanged(ConnectionState state) {
    }
}
