package io.zkcoord.once;

import io.zkcoord.CoordinationException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.ACL;

/**
 * The pure part of a write applied exactly once: what one attempt sends, and what its answer
 * means. Stateless; tested without a server.
 *
 * <h2>The protocol</h2>
 * Each session that writes a value node keeps one <em>marker</em>: an ephemeral child of the value
 * node named {@code zkcoord-once-<session id>}. Every attempt of every operation is one {@code
 * multi} of two writes: the marker's data becomes the attempt's token (writer, operation,
 * attempt), guarded by the marker's version as last known (or created, if it has none yet), and
 * the value is written, guarded by the version it was seen with. So:
 * <ul>
 *   <li>an attempt lands only if the marker is where the writer last saw it, and moves it: of all
 *       the attempts sent against one marker version, at most one ever lands, however late a lost
 *       one arrives;
 *   <li>after a lost reply the writer reads the marker (and the value, in the same round trip): a
 *       token of its current operation means that attempt landed, and its result is known; any
 *       other token means none has landed yet, and any that lands later makes the next attempt
 *       fail on the marker, which sends the writer back to read it;
 *   <li>the marker dies with its session. A writer whose session ended with an attempt unanswered
 *       cannot read it any more: that is the one case it cannot resolve ({@link
 *       io.zkcoord.CommitOutcomeUnknownException}).
 * </ul>
 * Curator's recipes read the value node's data only, never its children: the markers are where
 * they do not look, and go with their sessions.
 */
public final class OnceRule {

    /** The name prefix of a marker, a child of the value node. */
    public static final String MARKER_PREFIX = "zkcoord-once-";

    private OnceRule() {
    }

    /** @return the marker of {@code sessionId} under {@code valuePath} */
    public static String markerPath(String valuePath, long sessionId) {
        return (valuePath.equals("/") ? "" : valuePath) + "/" + MARKER_PREFIX + Long.toHexString(sessionId);
    }

    /** @return whether a child of a value node is a marker */
    public static boolean isMarker(String childName) {
        return childName.startsWith(MARKER_PREFIX);
    }

    /**
     * What a marker says: which writer (a random id per writer object), which of its operations,
     * which attempt.
     *
     * @param writer the writer's id
     * @param operation the operation's number, per writer
     * @param attempt the attempt's number, per operation
     */
    public record Token(long writer, long operation, int attempt) {

        /** @return the marker's data */
        public byte[] bytes() {
            return (Long.toHexString(writer) + ":" + operation + ":" + attempt).getBytes(StandardCharsets.US_ASCII);
        }

        /** @return the token in a marker's data, or empty if it holds none (written by someone else) */
        public static Optional<Token> parse(byte[] data) {
            if (data == null) {
                return Optional.empty();
            }
            String[] parts = new String(data, StandardCharsets.US_ASCII).split(":");
            if (parts.length != 3) {
                return Optional.empty();
            }
            try {
                return Optional.of(new Token(Long.parseUnsignedLong(parts[0], 16), Long.parseLong(parts[1]),
                        Integer.parseInt(parts[2])));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
    }

    /**
     * What the writer knows of its marker.
     *
     * @param exists whether it exists
     * @param version its version, if it exists
     */
    public record Marker(boolean exists, int version) {
        /** A marker not made yet. */
        public static final Marker ABSENT = new Marker(false, 0);
    }

    /**
     * One attempt's transaction.
     *
     * @param ops the operations of the {@code multi}
     * @param valueIndex where the value's write is in {@code ops}
     * @param markerIndex where the marker's write is in {@code ops}
     */
    public record Attempt(List<Op> ops, int valueIndex, int markerIndex) {
    }

    /**
     * @param valuePath the value node
     * @param seen the value node as last seen
     * @param write what to write
     * @param markerPath this session's marker
     * @param marker what is known of it
     * @param token this attempt's token
     * @param valueAcl the ACL of the value node, should it be made
     * @param markerAcl the ACL of the marker
     * @return the transaction: when the node is missing, the value's create comes first (the
     *     marker is its child); otherwise the marker's write does, so that a refusal names the
     *     marker before the value
     * @throws CoordinationException if a guarded write would have to send version -1, which
     *     ZooKeeper reads as "any version" (see {@link #guardVersion})
     */
    public static Attempt attempt(String valuePath, NodeState seen, Plan.Write<?> write, String markerPath,
            Marker marker, Token token, List<ACL> valueAcl, List<ACL> markerAcl) {
        List<Op> ops = new ArrayList<>();
        int valueIndex;
        int markerIndex;
        if (!seen.exists()) {
            ops.add(Op.create(valuePath, write.data(), valueAcl, CreateMode.PERSISTENT));
            ops.add(Op.create(markerPath, token.bytes(), markerAcl, CreateMode.EPHEMERAL));
            valueIndex = 0;
            markerIndex = 1;
        } else {
            ops.add(marker.exists()
                    ? Op.setData(markerPath, token.bytes(), marker.version())
                    : Op.create(markerPath, token.bytes(), markerAcl, CreateMode.EPHEMERAL));
            ops.add(Op.setData(valuePath, write.data(), write.guarded() ? guardVersion(valuePath, seen) : -1));
            valueIndex = 1;
            markerIndex = 0;
        }
        ops.addAll(write.extra());
        return new Attempt(ops, valueIndex, markerIndex);
    }

    /**
     * The version a guarded write sends. ZooKeeper's version is an int that wraps from {@link
     * Integer#MAX_VALUE} to {@link Integer#MIN_VALUE} and on through the negative numbers; a node
     * whose version is exactly -1 (after 2^32 - 1 writes) cannot be written conditionally, since
     * -1 means "any version". Rather than write blindly, the write fails; one unconditional write
     * (a {@code set}) moves the node to version 0 and conditional writes work again.
     *
     * @return {@code seen}'s version
     * @throws CoordinationException if it is -1
     */
    public static int guardVersion(String valuePath, NodeState seen) {
        if (seen.version() == -1) {
            throw new CoordinationException("the version of " + valuePath + " has wrapped to -1, which ZooKeeper reads"
                    + " as 'any version': no conditional write can be sent until one unconditional set moves it to 0");
        }
        return seen.version();
    }

    /** What an attempt's answer means. */
    public enum Verdict {
        /** Applied: the value and the marker were written. */
        APPLIED,
        /** No answer (connection loss, timeout, the session moved): it may have been applied. */
        LOST,
        /** The session ended: if an attempt was unanswered, nobody can tell any more. */
        SESSION_ENDED,
        /** Refused on the marker: another attempt of this session landed (perhaps one of ours); nothing applied. */
        MARKER_MOVED,
        /** Refused on the value: it changed since it was seen; nothing applied by this attempt. */
        VALUE_MOVED,
        /** The value's parent is missing; nothing applied. */
        PARENT_MISSING,
        /** Refused by one of the extra operations; nothing applied by this attempt. */
        EXTRA_REFUSED,
        /** Refused for good (no permission, a bad argument ...); nothing applied. */
        FAILED
    }

    /**
     * @param code the {@code multi}'s result code
     * @param results its per-operation results (null if none came)
     * @param attempt the attempt
     * @return what it means
     */
    public static Verdict verdict(Code code, List<OpResult> results, Attempt attempt) {
        switch (code) {
            case OK:
                return Verdict.APPLIED;
            case CONNECTIONLOSS:
            case OPERATIONTIMEOUT:
            case SESSIONMOVED:
                return Verdict.LOST;
            case SESSIONEXPIRED:
                return Verdict.SESSION_ENDED;
            default:
                break;
        }
        int culprit = culprit(results);
        Code err = culprit < 0 ? code : Code.get(((OpResult.ErrorResult) results.get(culprit)).getErr());
        if (culprit < 0) {
            culprit = attempt.valueIndex() == 0 ? 0 : 1; // no per-op results: a guess that only costs a read
        }
        if (err != Code.BADVERSION && err != Code.NONODE && err != Code.NODEEXISTS && err != Code.NOTEMPTY) {
            return Verdict.FAILED;
        }
        if (culprit == attempt.markerIndex()) {
            return Verdict.MARKER_MOVED;
        }
        if (culprit == attempt.valueIndex()) {
            boolean create = attempt.ops().get(culprit).getType() == org.apache.zookeeper.ZooDefs.OpCode.create;
            return create && err == Code.NONODE ? Verdict.PARENT_MISSING : Verdict.VALUE_MOVED;
        }
        return Verdict.EXTRA_REFUSED;
    }

    /** @return the index of the operation that failed the transaction, or -1 if the results do not say */
    private static int culprit(List<OpResult> results) {
        if (results == null) {
            return -1;
        }
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i) instanceof OpResult.ErrorResult e && e.getErr() != Code.OK.intValue()
                    && e.getErr() != Code.RUNTIMEINCONSISTENCY.intValue()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param results an applied attempt's results
     * @param attempt the attempt
     * @return the marker's version after it
     */
    public static int markerVersionAfter(List<OpResult> results, Attempt attempt) {
        return results.get(attempt.markerIndex()) instanceof OpResult.SetDataResult s ? s.getStat().getVersion() : 0;
    }

    /**
     * @param results an applied attempt's results
     * @param attempt the attempt
     * @param data what it wrote
     * @return the value node after it; its zxids are 0 (unknown) if it was made by the attempt
     */
    public static NodeState valueAfter(List<OpResult> results, Attempt attempt, byte[] data) {
        if (results.get(attempt.valueIndex()) instanceof OpResult.SetDataResult s) {
            return NodeState.of(data, s.getStat());
        }
        return new NodeState(true, data, 0, 0, 0);
    }
}
