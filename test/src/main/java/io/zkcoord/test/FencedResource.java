package io.zkcoord.test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * A resource that accepts a write only with a fencing token at least as high as any it saw, as a storage
 * service guards itself against a lock holder that lost its lock without knowing: a check for user code.
 * Pass it the fencing token of the hold ({@code ZkLock.fencingToken()}, {@code ZkLease.fencingToken()})
 * with every write; after the lock went to someone else, the old holder's writes are refused.
 *
 * <p>A write with the same token as the highest is accepted (one holder writes many times during its
 * hold). The first write is accepted whatever its token.
 *
 * <p>Thread-safe: every method is atomic (guarded by {@code this}).
 */
public final class FencedResource {

    private final List<String> accepted = new ArrayList<>(); // guarded by this
    private boolean anyAccepted;                              // guarded by this
    private long highest;                                     // guarded by this
    private int rejected;                                     // guarded by this

    /** A resource that has seen no write. */
    public FencedResource() {
    }

    /**
     * Writes {@code value} if {@code fencingToken} is at least the highest token accepted so far.
     *
     * @param fencingToken the writer's fencing token
     * @param value what to write; kept in {@link #accepted()}
     * @throws IllegalStateException if the token is stale (lower than one already accepted): the write is
     *     refused and counted in {@link #rejected()}; the message names both tokens
     */
    public synchronized void write(long fencingToken, String value) {
        if (anyAccepted && fencingToken < highest) {
            rejected++;
            throw new IllegalStateException("stale fencing token " + fencingToken + ": a write with token "
                    + highest + " was accepted before; refused " + value);
        }
        anyAccepted = true;
        highest = fencingToken;
        accepted.add(value);
    }

    /** @return the values written so far, in the order they were accepted (a copy) */
    public synchronized List<String> accepted() {
        return List.copyOf(accepted);
    }

    /** @return how many writes were refused for a stale token */
    public synchronized int rejected() {
        return rejected;
    }

    /** @return the highest token accepted so far; empty before the first accepted write */
    public synchronized OptionalLong highestToken() {
        return anyAccepted ? OptionalLong.of(highest) : OptionalLong.empty();
    }

    @Override
    public synchronized String toString() {
        return "FencedResource[highest=" + (anyAccepted ? Long.toString(highest) : "none") + ", accepted="
                + accepted.size() + ", rejected=" + rejected + "]";
    }
}
