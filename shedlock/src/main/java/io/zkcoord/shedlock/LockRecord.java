package io.zkcoord.shedlock;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a lock node holds: whether it is locked, by which attempt, and until when, in the ensemble's
 * time. A node's expiry is computed from its own {@code mtime} (the leader's clock when the write
 * was applied), never from a client's clock:
 * <ul>
 *   <li>{@code LOCKED}: until {@code mtime + lockAtMostFor}, where {@code mtime} is that of the write
 *       that took or extended the lock (every later write to the node replaces the record);
 *   <li>{@code UNLOCKED}: until {@code lockedAt + lockAtLeastFor}, an absolute ensemble time that the
 *       unlocking holder knew from its own locking write's {@code mtime}.
 * </ul>
 * Written as {@code key=value} lines (UTF-8), so that {@code zkCli get} shows it plainly.
 * Immutable.
 */
record LockRecord(State state, String holder, long lockAtMostForMillis, long lockAtLeastForMillis,
        long unlockedUntilMillis, String owner) {

    enum State { LOCKED, UNLOCKED }

    static LockRecord locked(String holder, long lockAtMostForMillis, long lockAtLeastForMillis, String owner) {
        return new LockRecord(State.LOCKED, holder, lockAtMostForMillis, lockAtLeastForMillis, -1, owner);
    }

    LockRecord unlocked(long untilMillis) {
        return new LockRecord(State.UNLOCKED, holder, lockAtMostForMillis, lockAtLeastForMillis, untilMillis, owner);
    }

    /** @return the ensemble time at which the lock is free, given the node's {@code mtime} */
    long expiry(long mtime) {
        return state == State.LOCKED ? mtime + lockAtMostForMillis : unlockedUntilMillis;
    }

    byte[] bytes() {
        return ("state=" + state + "\nholder=" + holder + "\nlockAtMostForMillis=" + lockAtMostForMillis
                + "\nlockAtLeastForMillis=" + lockAtLeastForMillis + "\nunlockedUntilMillis=" + unlockedUntilMillis
                + "\nowner=" + owner + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** @return the record, or empty if {@code data} is not one (a node written by someone else) */
    static Optional<LockRecord> parse(byte[] data) {
        if (data == null) {
            return Optional.empty();
        }
        Map<String, String> fields = new HashMap<>();
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        try {
            return Optional.of(new LockRecord(State.valueOf(fields.get("state")), fields.get("holder"),
                    Long.parseLong(fields.get("lockAtMostForMillis")), Long.parseLong(fields.get("lockAtLeastForMillis")),
                    Long.parseLong(fields.get("unlockedUntilMillis")), fields.getOrDefault("owner", "")));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
