package io.zkcoord.shard;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Join and leave storms: members start and close at random while a checker records every {@code
 * assigned} and {@code revoked} on one clock. Checked over the whole history: no shard has two
 * owners at once, each shard's tokens grow from owner to owner, events alternate per member and
 * shard; and at the end every shard is owned and the members are balanced.
 *
 * <p>The intervals are sound without network faults: a shard moved or given up is released only
 * after its listeners returned from {@code revoked}, and the next owner's {@code assigned} comes
 * after its grant.
 */
class ShardStormTest {

    private static final int SHARDS = 24;

    /** One recorded event. */
    private record Event(long at, String member, int shard, long token, boolean assigned, RevokeReason reason) {
    }

    private final List<Event> history = new ArrayList<>();

    /** 12 seconds of random joins and leaves, up to 6 members, 24 shards (a minute in the soak profile). */
    @Test
    @Timeout(180)
    void joinAndLeaveStorm() throws Exception {
        storm(Duration.ofSeconds(12), 6, Long.getLong("storm.seed", System.nanoTime()));
    }

    /** The same for a minute, 10 members at most (soak). */
    @Test
    @Tag("soak")
    @Timeout(600)
    void longStorm() throws Exception {
        storm(Duration.ofMinutes(1), 10, Long.getLong("storm.seed", System.nanoTime()));
    }

    private void storm(Duration length, int maxMembers, long seed) throws Exception {
        Random random = new Random(seed);
        System.out.println("ShardStormTest seed " + seed + " (-Dstorm.seed to replay)");
        try (TestingServer server = new TestingServer(true)) {
            Map<String, ZkShardMember> live = new HashMap<>();
            Map<String, ZkClient> clients = new HashMap<>();
            int next = 0;
            int joins = 0;
            int leaves = 0;
            try {
                long end = System.nanoTime() + length.toNanos();
                while (System.nanoTime() < end) {
                    boolean join = live.size() <= 1 || (live.size() < maxMembers && random.nextBoolean());
                    if (join) {
                        String id = "m" + next++;
                        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).build();
                        ZkShardMember m = new ZkShardMember(c, "/storm", id, SHARDS);
                        m.addListener(recorder(id));
                        m.start();
                        live.put(id, m);
                        clients.put(id, c);
                        joins++;
                    } else {
                        List<String> ids = new ArrayList<>(live.keySet());
                        String id = ids.get(random.nextInt(ids.size()));
                        live.remove(id).close();
                        clients.remove(id).close();
                        leaves++;
                    }
                    TimeUnit.MILLISECONDS.sleep(50 + random.nextInt(400));
                }
                List<ZkShardMember> rest = List.copyOf(live.values());
                Await.until(Duration.ofSeconds(60), () -> balanced(rest), () -> "balanced at the end: " + views(rest));
                System.out.printf("ShardStormTest: %d joins, %d leaves, %d events%n", joins, leaves, history.size());
            } finally {
                live.values().forEach(ZkShardMember::close);
                clients.values().forEach(ZkClient::close);
            }
        }
        check();
    }

    private ShardListener recorder(String id) {
        return new ShardListener() {
            @Override
            public void assigned(int shard, long token) {
                record(new Event(System.nanoTime(), id, shard, token, true, null));
            }

            @Override
            public void revoked(int shard, long token, RevokeReason reason) {
                record(new Event(System.nanoTime(), id, shard, token, false, reason));
            }
        };
    }

    private synchronized void record(Event e) {
        history.add(e);
    }

    private static boolean balanced(List<ZkShardMember> members) {
        Set<Integer> all = new HashSet<>();
        int total = 0;
        int m = members.size();
        for (ZkShardMember member : members) {
            Set<Integer> owned = member.owned();
            if (owned.size() != SHARDS / m && owned.size() != (SHARDS + m - 1) / m) {
                return false;
            }
            all.addAll(owned);
            total += owned.size();
        }
        return all.size() == SHARDS && total == SHARDS;
    }

    private static String views(List<ZkShardMember> members) {
        StringBuilder s = new StringBuilder();
        members.forEach(m -> s.append(m.memberId()).append('=').append(m.owned()).append(' '));
        return s.toString();
    }

    /** Builds each ownership interval from the history and checks the rules over all of them. */
    private synchronized void check() {
        record Interval(String member, int shard, long token, long from, long to) { }
        List<String> problems = new ArrayList<>();
        Map<String, Event> open = new HashMap<>();
        List<Interval> intervals = new ArrayList<>();
        for (Event e : history) {
            String key = e.member() + "/" + e.shard();
            Event was = open.get(key);
            if (e.assigned()) {
                if (was != null) {
                    problems.add("assigned twice in a row: " + e);
                }
                open.put(key, e);
            } else {
                if (was == null || was.token() != e.token()) {
                    problems.add("revoked without a matching assigned: " + e);
                    continue;
                }
                open.remove(key);
                intervals.add(new Interval(e.member(), e.shard(), e.token(), was.at(), e.at()));
            }
        }
        for (Event e : open.values()) {
            intervals.add(new Interval(e.member(), e.shard(), e.token(), e.at(), Long.MAX_VALUE));
        }
        intervals.sort(Comparator.comparingInt(Interval::shard).thenComparingLong(Interval::from));
        for (int i = 1; i < intervals.size(); i++) {
            Interval a = intervals.get(i - 1);
            Interval b = intervals.get(i);
            if (a.shard() != b.shard()) {
                continue;
            }
            if (!a.member().equals(b.member()) && b.from() < a.to()) {
                problems.add("two owners at once: " + a + " and " + b);
            }
            if (!a.member().equals(b.member()) && b.token() <= a.token()) {
                problems.add("token did not grow: " + a + " then " + b);
            }
        }
        assertTrue(problems.isEmpty(), problems.size() + " problems, first: " + problems.subList(0, Math.min(5, problems.size())));
        assertTrue(intervals.size() >= SHARDS, "the storm moved shards: " + intervals.size() + " ownerships");
    }
}
