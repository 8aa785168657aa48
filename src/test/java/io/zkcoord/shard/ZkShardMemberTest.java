package io.zkcoord.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zkcoord.ZkClient;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.group.DuplicateMemberException;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Shard ownership against a real server: exclusive and total at rest, balanced, sticky on join and
 * leave, re-owned after a session expiry, listeners alternating per shard with growing tokens.
 */
@Timeout(180)
class ZkShardMemberTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PATH = "/shards/jobs";
    private static final int SHARDS = 12;

    private ZkTestEnsemble ensemble;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final Map<String, Recorder> recorders = new HashMap<>();

    /** Every test has a server of its own ({@code @ZkEnsemble} on the method): the group's path is the same in each. */
    @BeforeEach
    void ensemble(ZkTestEnsemble ensemble) {
        this.ensemble = ensemble;
    }

    @AfterEach
    void stop() throws Exception {
        Collections.reverse(open);
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    /** Listens to one member: every event, checking alternation per shard as it comes. */
    private static final class Recorder implements ShardListener {
        final String id;
        final Map<Integer, Long> owned = new TreeMap<>();
        final List<String> problems = new ArrayList<>();
        /** Every token this member was assigned, per shard. */
        final Map<Integer, List<Long>> tokens = new HashMap<>();

        Recorder(String id) {
            this.id = id;
        }

        @Override
        public synchronized void assigned(int shard, long token) {
            if (owned.put(shard, token) != null) {
                problems.add(id + ": assigned " + shard + " twice in a row");
            }
            tokens.computeIfAbsent(shard, k -> new ArrayList<>()).add(token);
        }

        @Override
        public synchronized void revoked(int shard, long token, RevokeReason reason) {
            Long had = owned.remove(shard);
            if (had == null || had != token) {
                problems.add(id + ": revoked " + shard + " (" + reason + ") without a matching assigned");
            }
        }

        synchronized Set<Integer> owned() {
            return new HashSet<>(owned.keySet());
        }
    }

    /** Starts one member per id and waits until they are balanced; @return them, in order (a mutable list) */
    private List<ZkShardMember> startedAndBalanced(String... ids) {
        List<ZkShardMember> members = new ArrayList<>();
        for (String id : ids) {
            ZkShardMember m = member(id);
            m.start();
            members.add(m);
        }
        awaitBalanced(members);
        return members;
    }

    private ZkShardMember member(String id) {
        ZkClient c = ensemble.clientBuilder().sessionTimeout(Duration.ofSeconds(4)).build();
        open.add(c);
        ZkShardMember m = new ZkShardMember(c, PATH, id, SHARDS);
        open.add(m);
        Recorder r = new Recorder(id);
        recorders.put(id, r);
        m.addListener(r);
        return m;
    }

    private ZkClient ca() {
        return (ZkClient) open.get(0);
    }

    /** At rest: every shard owned by exactly one live member, each owning floor or ceil of n/m, listeners agreeing with owned(). */
    private void awaitBalanced(List<ZkShardMember> members) {
        Await.until(WAIT, () -> {
            Set<Integer> all = new HashSet<>();
            int total = 0;
            for (ZkShardMember m : members) {
                Set<Integer> owned = m.owned();
                int c = owned.size();
                if (c != SHARDS / members.size() && c != (SHARDS + members.size() - 1) / members.size()) {
                    return false;
                }
                if (!owned.equals(recorders.get(m.memberId()).owned())) {
                    return false;
                }
                all.addAll(owned);
                total += c;
            }
            return all.size() == SHARDS && total == SHARDS;
        }, () -> "balanced over " + members.size() + ": " + views(members));
    }

    private static String views(List<ZkShardMember> members) {
        StringBuilder s = new StringBuilder();
        members.forEach(m -> s.append(m.memberId()).append('=').append(m.owned()).append(' '));
        return s.toString();
    }

    private Map<Integer, String> ownersNow(List<ZkShardMember> members) {
        Map<Integer, String> owners = new TreeMap<>();
        for (ZkShardMember m : members) {
            for (int shard : m.owned()) {
                if (owners.put(shard, m.memberId()) != null) {
                    fail("shard " + shard + " owned twice at rest: " + views(members));
                }
            }
        }
        return owners;
    }

    private void assertNoListenerProblems() {
        for (Recorder r : recorders.values()) {
            synchronized (r) {
                assertTrue(r.problems.isEmpty(), r.problems.toString());
            }
        }
    }

    /** Each shard's current token is greater than every token any member was given for it before. */
    private void assertTokensGrow(List<ZkShardMember> members) {
        for (ZkShardMember m : members) {
            for (int shard : m.owned()) {
                long now = m.token(shard).orElseThrow();
                for (Recorder r : recorders.values()) {
                    synchronized (r) {
                        for (long earlier : r.tokens.getOrDefault(shard, List.of())) {
                            assertTrue(earlier <= now, "shard " + shard + ": " + m.memberId() + " holds token " + now
                                    + " but " + r.id + " had " + earlier);
                        }
                    }
                }
            }
        }
    }

    /** Three members share twelve shards four each; the ensemble's owners agree; a fourth joins and takes three, nothing else moves. */
    @Test
    @ZkEnsemble
    void balancedAndStickyOnJoin() throws Exception {
        List<ZkShardMember> members = startedAndBalanced("a", "b", "c");
        Map<Integer, String> before = ownersNow(members);
        Await.until("the ensemble agrees", WAIT, () -> {
            try {
                return members.get(0).assignment().equals(ownersNow(members));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        ShardSnapshot snapshot = io.zkcoord.inspect.Inspector.shards(ca(), PATH);
        assertEquals(SHARDS, snapshot.shards());
        assertEquals(List.of("a", "b", "c"), snapshot.members().stream().map(io.zkcoord.group.Member::id).toList());
        assertEquals(before, snapshot.target());
        for (ZkShardMember m : members) {
            for (int shard : m.owned()) {
                assertEquals(new ShardSnapshot.Owner(m.memberId(), m.token(shard).orElseThrow()), snapshot.owners().get(shard));
            }
        }
        assertEquals(List.of("a", "b", "c"),
                io.zkcoord.inspect.Inspector.group(ca(), PATH + "/members").stream().map(io.zkcoord.group.Member::id).toList());
        assertEquals(0, io.zkcoord.inspect.Inspector.shards(ca(), "/nothing/here").shards());
        ZkShardMember d = member("d");
        d.start();
        members.add(d);
        awaitBalanced(members);
        Map<Integer, String> after = ownersNow(members);
        int moved = 0;
        for (int k = 0; k < SHARDS; k++) {
            if (!after.get(k).equals(before.get(k))) {
                moved++;
                assertEquals("d", after.get(k), "only the newcomer gains on a join");
            }
        }
        assertEquals(3, moved);
        assertTokensGrow(members);
        // Writes fenced by ownership: the owner's lands; a member that does not own the shard is refused.
        ca().call("/", zk -> zk.create("/register", new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.PERSISTENT));
        ZkShardMember owner = members.stream().filter(m -> m.owned().contains(0)).findFirst().orElseThrow();
        ZkShardMember other = members.stream().filter(m -> !m.owned().contains(0)).findFirst().orElseThrow();
        owner.commitIfHeld(0, List.of(org.apache.zookeeper.Op.setData("/register", "0".getBytes(java.nio.charset.StandardCharsets.UTF_8), -1)));
        assertThrows(io.zkcoord.LockLostException.class,
                () -> other.commitIfHeld(0, List.of(org.apache.zookeeper.Op.setData("/register", "x".getBytes(java.nio.charset.StandardCharsets.UTF_8), -1))));
        byte[] written = ca().call("/register", zk -> zk.getData("/register", false, null));
        assertEquals("0", new String(written, java.nio.charset.StandardCharsets.UTF_8));
        assertNoListenerProblems();
    }

    /** A member that closes gives its shards up; the others take them and are balanced again. */
    @Test
    @ZkEnsemble
    void closeHandsShardsOver() throws Exception {
        List<ZkShardMember> members = startedAndBalanced("a", "b", "c");
        Map<Integer, String> before = ownersNow(members);
        ZkShardMember leaving = members.remove(1);
        leaving.close();
        assertTrue(leaving.owned().isEmpty());
        awaitBalanced(members);
        Map<Integer, String> after = ownersNow(members);
        for (int k = 0; k < SHARDS; k++) {
            if (!before.get(k).equals("b")) {
                assertEquals(before.get(k), after.get(k), "shard " + k + " of a member that stayed did not move");
            }
        }
        synchronized (recorders.get("b")) {
            assertTrue(recorders.get("b").owned.isEmpty(), "b heard revoked for every shard");
        }
        assertTokensGrow(members);
        assertNoListenerProblems();
    }

    /**
     * A member leaving (its member closed, or its member and client, or only its client) while another
     * starts, in both orders and each member in turn as the leaver (the coordinator among them): every
     * round ends balanced over the three left, each shard owned once, tokens growing, listeners
     * alternating. docs/shards.md says what may delay balance here (retry delays after a failure).
     */
    @Test
    @ZkEnsemble
    void leaveWhileAnotherStartsEndsBalanced() throws Exception {
        long seed = System.nanoTime();
        java.util.Random random = new java.util.Random(seed);
        for (int round = 0; round < 6; round++) {
            String r = "r" + round;
            List<ZkShardMember> members = startedAndBalanced("a" + r, "b" + r, "c" + r);
            ZkShardMember leaver = members.remove(round % 3);
            ZkClient leaverClient = (ZkClient) open.get(open.indexOf(leaver) - 1);
            int how = random.nextInt(3);
            Runnable leave = () -> {
                if (how != 2) {
                    leaver.close();
                }
                if (how != 0) {
                    leaverClient.close();
                }
            };
            ZkShardMember joiner = member("d" + r);
            boolean leaveOnTheOtherThread = random.nextBoolean();
            Thread other = new Thread(leaveOnTheOtherThread ? leave : joiner::start, "leave-or-join");
            other.start();
            if (leaveOnTheOtherThread) {
                joiner.start();
            } else {
                leave.run();
            }
            other.join();
            members.add(joiner);
            awaitBalanced(members);
            ownersNow(members);
            assertTokensGrow(members);
            assertNoListenerProblems();
            for (ZkShardMember m : members) {
                m.close();
            }
            leaver.close();
        }
        System.err.println("leaveWhileAnotherStartsEndsBalanced seed " + seed);
    }

    /** A member whose session expires loses its shards (revoked), rejoins in its new session, and the group is balanced again. */
    @Test
    @ZkEnsemble
    void sessionExpiryMovesAndRebalances() throws Exception {
        List<ZkShardMember> members = new ArrayList<>();
        List<ZkClient> clients = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            ZkShardMember m = member(id);
            clients.add((ZkClient) open.get(open.size() - 2));
            m.start();
            members.add(m);
        }
        awaitBalanced(members);
        ZkClient b = clients.get(1);
        long oldSession = b.sessionId();
        ensemble.expireSession(b);
        Await.until("b in a new session", WAIT, () -> b.sessionId() != oldSession && b.state().isConnected());
        awaitBalanced(members);
        assertTokensGrow(members);
        assertNoListenerProblems();
    }

    /** Closing a member (and its group) after its client was closed returns quietly; the others take its shards. */
    @Test
    @ZkEnsemble
    void closeAfterTheClientClosed() {
        ZkShardMember a = member("a");
        ZkShardMember b = member("b");
        a.start();
        b.start();
        awaitBalanced(List.of(a, b));
        ((ZkClient) open.get(open.indexOf(b) - 1)).close();
        b.close();
        b.close();
        awaitBalanced(List.of(a));
        assertNoListenerProblems();
    }

    /**
     * A listener added while the member's earlier events are still queued (a listener is slow)
     * hears assigned and revoked alternating, starting with assigned, for changes made after it
     * was added and before its turn came.
     */
    @Test
    @ZkEnsemble
    void listenerAddedBehindQueuedEventsHearsThemAlternating() throws Exception {
        ZkShardMember a = member("a");
        AtomicBoolean block = new AtomicBoolean();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        a.addListener(new ShardListener() {
            @Override
            public void assigned(int shard, long token) {
            }

            @Override
            public void revoked(int shard, long token, RevokeReason reason) {
                if (block.compareAndSet(true, false)) {
                    blocked.countDown();
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        });
        a.start();
        awaitBalanced(List.of(a));
        block.set(true);
        ZkShardMember b = member("b");
        b.start();
        assertTrue(blocked.await(WAIT.toSeconds(), TimeUnit.SECONDS), "a gives shards up to b");
        Recorder late = new Recorder("late");
        a.addListener(late); // queued behind a's revoked events, which wait for the slow listener
        ZkShardMember c = member("c");
        c.start();
        Await.until("a gives two more shards up, to c", WAIT, () -> a.owned().size() == SHARDS / 3);
        unblock.countDown();
        awaitBalanced(List.of(a, b, c));
        Await.until("the late listener agrees with a", WAIT, () -> late.owned().equals(a.owned()));
        synchronized (late) {
            assertTrue(late.problems.isEmpty(), late.problems.toString());
        }
        assertNoListenerProblems();
    }

    /**
     * close() called by one of the member's own listeners does not wait for the listeners (the
     * caller is one of them): no timeout, they hear revoked(CLOSED) for every shard once the
     * caller returns, and the others take the shards.
     */
    @Test
    @ZkEnsemble
    void closeFromOwnListener() throws Exception {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ZkShardMember.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> warnings = new ch.qos.logback.core.read.ListAppender<>();
        warnings.start();
        logger.addAppender(warnings);
        try {
            ZkShardMember a = member("a");
            ZkShardMember b = member("b");
            a.start();
            b.start();
            awaitBalanced(List.of(a, b));
            AtomicBoolean closeOnNext = new AtomicBoolean(true);
            CountDownLatch closed = new CountDownLatch(1);
            a.addListener(new ShardListener() {
                @Override
                public void assigned(int shard, long token) {
                }

                @Override
                public void revoked(int shard, long token, RevokeReason reason) {
                    if (closeOnNext.compareAndSet(true, false)) {
                        a.close();
                        closed.countDown();
                    }
                }
            });
            ZkShardMember c = member("c");
            c.start(); // a gives two shards to c; its first revoked closes a
            assertTrue(closed.await(WAIT.toSeconds(), TimeUnit.SECONDS), "close() returned");
            awaitBalanced(List.of(b, c));
            Await.until("a's listeners heard revoked for every shard", WAIT, () -> recorders.get("a").owned().isEmpty());
            assertTrue(a.owned().isEmpty());
            List<String> warned = warnings.list.stream()
                    .filter(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
                    .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
            assertTrue(warned.isEmpty(), warned.toString());
            assertNoListenerProblems();
        } finally {
            logger.detachAppender(warnings);
        }
    }

    /** A member with another shard count, or a duplicate id, is refused at start. */
    @Test
    @ZkEnsemble
    void refusedMembers() {
        ZkShardMember a = member("a");
        a.start();
        ZkClient other = ensemble.clientBuilder().build();
        open.add(other);
        ZkShardMember wrongCount = new ZkShardMember(other, PATH, "x", SHARDS + 1);
        open.add(wrongCount);
        IllegalStateException e = assertThrows(IllegalStateException.class, wrongCount::start);
        assertTrue(e.getMessage().contains(String.valueOf(SHARDS)), e.getMessage());
        ZkShardMember duplicate = new ZkShardMember(other, PATH, "a", SHARDS);
        open.add(duplicate);
        assertThrows(DuplicateMemberException.class, duplicate::start);
        ZkShardMember sameClient = new ZkShardMember(ca(), PATH, "a", SHARDS);
        open.add(sameClient);
        assertThrows(DuplicateMemberException.class, sameClient::start, "a duplicate on the member's own client too");
        assertThrows(IllegalArgumentException.class, () -> new ZkShardMember(other, PATH, "y", 0));
        assertThrows(IllegalArgumentException.class, () -> new ZkShardMember(other, "rel", "y", 3));
        awaitBalanced(List.of(a));
    }
}
