package io.zkcoord.once;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.once.OnceRule.Attempt;
import io.zkcoord.once.OnceRule.Marker;
import io.zkcoord.once.OnceRule.Token;
import io.zkcoord.once.OnceRule.Verdict;
import java.util.List;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/** The exactly-once rule without a server: what an attempt sends and what its answer means. */
class OnceRuleTest {

    private static final List<org.apache.zookeeper.data.ACL> ACL = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    private static final Token TOKEN = new Token(0xabcdefL, 7, 2);

    private static NodeState at(int version) {
        return new NodeState(true, new byte[8], version, 10, 20);
    }

    private static Attempt attempt(NodeState seen, boolean guarded, Marker marker) {
        return OnceRule.attempt("/c", seen, new Plan.Write<>(new byte[8], guarded, List.of(), 1L),
                OnceRule.markerPath("/c", 0x1fL), marker, TOKEN, ACL, ACL);
    }

    @Test
    void markerIsAChildNamedBySession() {
        assertEquals("/c/zkcoord-once-1f", OnceRule.markerPath("/c", 0x1f));
        assertTrue(OnceRule.isMarker("zkcoord-once-1f"));
        assertFalse(OnceRule.isMarker("round-1"));
    }

    @Test
    void tokenRoundTripsAndForeignDataIsNoToken() {
        assertEquals(TOKEN, Token.parse(TOKEN.bytes()).orElseThrow());
        Token negative = new Token(-5L, 1, 1);
        assertEquals(negative, Token.parse(negative.bytes()).orElseThrow());
        assertTrue(Token.parse("hello".getBytes()).isEmpty());
        assertTrue(Token.parse(null).isEmpty());
        assertTrue(Token.parse("x:y:z".getBytes()).isEmpty());
    }

    /** An existing node: the marker's guarded write first, then the value's conditional write. */
    @Test
    void existingNodeMarkerFirstThenValueGuardedByItsVersion() {
        Attempt a = attempt(at(41), true, new Marker(true, 3));
        assertEquals(0, a.markerIndex());
        assertEquals(1, a.valueIndex());
        assertEquals(ZooDefs.OpCode.setData, a.ops().get(0).getType());
        assertEquals(3, ((Op.SetData) a.ops().get(0)).toRequestRecord() instanceof org.apache.zookeeper.proto.SetDataRequest r
                ? r.getVersion() : -99);
        assertEquals(41, ((org.apache.zookeeper.proto.SetDataRequest) a.ops().get(1).toRequestRecord()).getVersion());
    }

    /** The first write of a session makes its marker (ephemeral). */
    @Test
    void absentMarkerIsCreatedEphemeral() {
        Attempt a = attempt(at(0), true, Marker.ABSENT);
        assertEquals(ZooDefs.OpCode.create, a.ops().get(0).getType());
        assertEquals("/c/zkcoord-once-1f", a.ops().get(0).getPath());
    }

    /** A missing node: the value's create first (the marker is its child). */
    @Test
    void missingNodeValueCreatedFirst() {
        Attempt a = attempt(NodeState.MISSING, true, Marker.ABSENT);
        assertEquals(0, a.valueIndex());
        assertEquals(1, a.markerIndex());
        assertEquals("/c", a.ops().get(0).getPath());
        assertEquals(ZooDefs.OpCode.create, a.ops().get(0).getType());
    }

    /** An unguarded set writes whatever the version (still once: the marker guards it). */
    @Test
    void unguardedSetSendsAnyVersionOnTheValueOnly() {
        Attempt a = attempt(at(-1), false, new Marker(true, 0));
        assertEquals(-1, ((org.apache.zookeeper.proto.SetDataRequest) a.ops().get(1).toRequestRecord()).getVersion());
        assertEquals(0, ((org.apache.zookeeper.proto.SetDataRequest) a.ops().get(0).toRequestRecord()).getVersion());
    }

    /** Past Integer.MAX_VALUE the version wraps: negative versions are guarded as any other; -1 is refused, never sent. */
    @Test
    void wrappedVersionsAreGuardedAndMinusOneIsNeverSent() {
        Attempt wrapped = attempt(at(Integer.MIN_VALUE), true, new Marker(true, 0));
        assertEquals(Integer.MIN_VALUE,
                ((org.apache.zookeeper.proto.SetDataRequest) wrapped.ops().get(1).toRequestRecord()).getVersion());
        CoordinationException e = assertThrows(CoordinationException.class,
                () -> attempt(at(-1), true, new Marker(true, 0)));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
    }

    private static List<OpResult> failedAt(int index, Code code, int size) {
        OpResult[] r = new OpResult[size];
        for (int i = 0; i < size; i++) {
            int err = i < index ? Code.OK.intValue() : i == index ? code.intValue() : Code.RUNTIMEINCONSISTENCY.intValue();
            r[i] = new OpResult.ErrorResult(err);
        }
        return List.of(r);
    }

    @Test
    void verdicts() {
        Attempt a = attempt(at(4), true, new Marker(true, 3));
        assertEquals(Verdict.APPLIED, OnceRule.verdict(Code.OK, List.of(), a));
        assertEquals(Verdict.LOST, OnceRule.verdict(Code.CONNECTIONLOSS, null, a));
        assertEquals(Verdict.LOST, OnceRule.verdict(Code.OPERATIONTIMEOUT, null, a));
        assertEquals(Verdict.SESSION_ENDED, OnceRule.verdict(Code.SESSIONEXPIRED, null, a));
        assertEquals(Verdict.MARKER_MOVED, OnceRule.verdict(Code.BADVERSION, failedAt(0, Code.BADVERSION, 2), a));
        assertEquals(Verdict.VALUE_MOVED, OnceRule.verdict(Code.BADVERSION, failedAt(1, Code.BADVERSION, 2), a));
        assertEquals(Verdict.VALUE_MOVED, OnceRule.verdict(Code.NONODE, failedAt(1, Code.NONODE, 2), a));
        assertEquals(Verdict.FAILED, OnceRule.verdict(Code.NOAUTH, failedAt(1, Code.NOAUTH, 2), a));
        Attempt make = attempt(NodeState.MISSING, true, Marker.ABSENT);
        assertEquals(Verdict.PARENT_MISSING, OnceRule.verdict(Code.NONODE, failedAt(0, Code.NONODE, 2), make));
        assertEquals(Verdict.VALUE_MOVED, OnceRule.verdict(Code.NODEEXISTS, failedAt(0, Code.NODEEXISTS, 2), make));
        Attempt extra = OnceRule.attempt("/c", at(4), new Plan.Write<>(new byte[8], true,
                List.of(Op.delete("/c/round-1", -1)), 1L), "/c/m", new Marker(true, 1), TOKEN, ACL, ACL);
        assertEquals(Verdict.EXTRA_REFUSED, OnceRule.verdict(Code.NONODE, failedAt(2, Code.NONODE, 3), extra));
    }

    @Test
    void stateAfterAnAppliedAttempt() {
        Attempt a = attempt(at(4), true, new Marker(true, 3));
        Stat marker = new Stat();
        marker.setVersion(4);
        Stat value = new Stat();
        value.setVersion(5);
        value.setMzxid(99);
        value.setCzxid(10);
        List<OpResult> results = List.of(new OpResult.SetDataResult(marker), new OpResult.SetDataResult(value));
        assertEquals(4, OnceRule.markerVersionAfter(results, a));
        NodeState after = OnceRule.valueAfter(results, a, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        assertEquals(5, after.version());
        assertEquals(99, after.mzxid());
    }

    /** Freshness is the ensemble's order (czxid, then mzxid), never the version, which wraps. */
    @Test
    void newerByZxidNotVersion() {
        NodeState before = new NodeState(true, new byte[0], Integer.MAX_VALUE, 10, 100);
        NodeState wrapped = new NodeState(true, new byte[0], Integer.MIN_VALUE, 10, 101);
        assertTrue(wrapped.newerThan(before), "a wrapped version is still newer");
        assertFalse(before.newerThan(wrapped));
        NodeState remade = new NodeState(true, new byte[0], 0, 200, 200);
        assertTrue(remade.newerThan(wrapped), "a node made again is newer, whatever its version");
        assertTrue(before.newerThan(null));
        assertFalse(NodeState.MISSING.newerThan(before));
        assertFalse(new NodeState(true, new byte[0], 0, 0, 0).newerThan(before), "unknown zxids are not newer");
    }
}
