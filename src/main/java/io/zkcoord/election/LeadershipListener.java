package io.zkcoord.election;

/**
 * Told when this participant starts and stops leading. Calls come one at a time, in order, on a
 * library thread (never ZooKeeper's), and strictly alternate: {@code elected}, {@code revoked},
 * {@code elected}, ... Whatever a listener throws is logged; the other listeners are still told.
 * Listeners must be quick: the next event waits for them.
 */
public interface LeadershipListener {

    /** @param epoch the {@code czxid} of this participant's node: pass it with every write the leader makes */
    void elected(long epoch);

    /**
     * Stop acting as leader now.
     *
     * @param epoch the epoch of the leadership that ended
     * @param reason why
     */
    void revoked(long epoch, RevokeReason reason);
}
