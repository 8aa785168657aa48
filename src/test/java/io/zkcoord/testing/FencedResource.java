package io.zkcoord.testing;

import java.util.OptionalLong;

/**
 * A resource guarded by fencing tokens, as a storage service would guard itself against a lock holder that lost
 * its lock without knowing: it remembers the highest token it has accepted and refuses any write carrying a lower
 * one. A write with the same token as the highest is accepted, since one holder may write several times during its
 * hold. The first write is accepted whatever its token.
 *
 * <p>Thread-safe: all state is guarded by {@code this}.
 */
public final class FencedResource {

    private boolean anyAccepted;  // guarded by this
    private long highest;         // guarded by this; meaningful only when anyAccepted
    private long accepted;        // guarded by this
    private long refused;         // guarded by this

    /**
     * Attempts a write with {@code token}.
     *
     * @return true if accepted ({@code token >=} the highest accepted so far), false if refused
     */
    public synchronized boolean write(long token) {
        if (anyAccepted && token < highest) {
            refused++;
            return false;
        }
        anyAccepted = true;
        highest = token;
        accepted++;
        return true;
    }

    /** The highest token accepted so far, empty before the first accepted write. */
    public synchronized OptionalLong highestToken() {
        return anyAccepted ? OptionalLong.of(highest) : OptionalLong.empty();
    }

    /** Writes accepted so far. */
    public synchronized long acceptedWrites() {
        return accepted;
    }

    /** Writes refused so far. */
    public synchronized long refusedWrites() {
        return refused;
    }

    @Override
    public synchronized String toString() {
        return "FencedResource[highest=" + (anyAccepted ? Long.toString(highest) : "none")
                + ", accepted=" + accepted + ", refused=" + refused + "]";
    }
}
