package io.zkcoord.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The spread rule without a server: total, balanced, sticky, deterministic, over random histories. */
class ShardSpreadTest {

    /** No members: nobody owns anything. One member: it owns everything. */
    @Test
    void emptyAndSingle() {
        assertTrue(ShardSpread.spread(5, List.of(), Map.of(0, "gone")).isEmpty());
        Map<Integer, String> one = ShardSpread.spread(5, List.of("a"), Map.of());
        assertEquals(5, one.size());
        assertTrue(one.values().stream().allMatch("a"::equals));
    }

    /** Twelve shards over three members: four each. */
    @Test
    void balancedFromNothing() {
        Map<Integer, String> t = ShardSpread.spread(12, List.of("a", "b", "c"), Map.of());
        assertEquals(List.of(4L, 4L, 4L), List.of(count(t, "a"), count(t, "b"), count(t, "c")));
    }

    /** A balanced assignment is kept exactly: nothing moves when nothing changed. */
    @Test
    void balancedIsAFixedPoint() {
        Random random = new Random(7);
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(200);
            List<String> members = members(1 + random.nextInt(12));
            Map<Integer, String> t = ShardSpread.spread(n, members, randomCurrent(random, n, members));
            assertEquals(t, ShardSpread.spread(n, members, t));
        }
    }

    /** 50 random histories of joins, leaves and deaths: every promise checked after each step. */
    @Test
    void randomHistoriesKeepEveryPromise() {
        randomHistories(50);
    }

    /** Soak: 200 histories (the first 50 are the default build's). */
    @Tag("soak")
    @Test
    void randomHistoriesKeepEveryPromiseSoak() {
        randomHistories(200);
    }

    private static void randomHistories(int histories) {
        Random random = new Random(20261126);
        for (int history = 0; history < histories; history++) {
            int n = 1 + random.nextInt(300);
            List<String> members = new ArrayList<>(members(1 + random.nextInt(6)));
            int nextId = members.size();
            Map<Integer, String> owners = ShardSpread.spread(n, members, Map.of());
            check(n, members, owners);
            for (int step = 0; step < 30; step++) {
                List<String> before = List.copyOf(members);
                boolean join = members.size() <= 1 || random.nextBoolean();
                String leaver = null;
                if (join) {
                    members.add("m" + nextId++);
                } else {
                    leaver = members.remove(random.nextInt(members.size()));
                }
                Map<Integer, String> next = ShardSpread.spread(n, members, owners);
                check(n, members, next);
                int moved = moved(owners, next);
                if (join) {
                    int bound = (n + members.size() - 1) / members.size();
                    assertTrue(moved <= bound, "a join moved " + moved + " > ceil(" + n + "/" + members.size() + ") from " + before);
                } else {
                    long leaverHad = count(owners, leaver);
                    assertTrue(moved <= leaverHad + members.size(),
                            "a leave moved " + moved + " > " + leaverHad + " + " + members.size());
                    for (Map.Entry<Integer, String> e : owners.entrySet()) {
                        if (!e.getValue().equals(leaver) && !e.getValue().equals(next.get(e.getKey()))) {
                            assertTrue(count(owners, e.getValue()) > count(next, e.getValue()),
                                    "shard " + e.getKey() + " left " + e.getValue() + " although it did not shrink");
                        }
                    }
                }
                assertEquals(next, ShardSpread.spread(n, members, owners), "deterministic");
                owners = next;
            }
        }
    }

    /** Bad input fails at once. */
    @Test
    void badInput() {
        assertThrows(IllegalArgumentException.class, () -> ShardSpread.spread(0, List.of("a"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> ShardSpread.spread(3, List.of("a", "a"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> ShardSpread.spread(3, null, Map.of()));
    }

    private static void check(int n, List<String> members, Map<Integer, String> owners) {
        assertEquals(n, owners.size(), "every shard owned");
        for (int k = 0; k < n; k++) {
            assertTrue(members.contains(owners.get(k)), "shard " + k + " owned by a live member");
        }
        int m = members.size();
        for (String id : members) {
            long c = count(owners, id);
            assertTrue(c == n / m || c == (n + m - 1) / m, id + " owns " + c + " of " + n + " over " + m);
        }
    }

    private static int moved(Map<Integer, String> before, Map<Integer, String> after) {
        int moved = 0;
        for (Map.Entry<Integer, String> e : after.entrySet()) {
            if (!e.getValue().equals(before.get(e.getKey()))) {
                moved++;
            }
        }
        return moved;
    }

    private static long count(Map<Integer, String> owners, String id) {
        return owners.values().stream().filter(id::equals).count();
    }

    private static List<String> members(int m) {
        List<String> members = new ArrayList<>();
        for (int i = 0; i < m; i++) {
            members.add("m" + i);
        }
        return members;
    }

    private static Map<Integer, String> randomCurrent(Random random, int n, List<String> members) {
        Map<Integer, String> current = new HashMap<>();
        for (int k = 0; k < n; k++) {
            if (random.nextInt(4) > 0) {
                current.put(k, random.nextInt(5) == 0 ? "gone" : members.get(random.nextInt(members.size())));
            }
        }
        return current;
    }
}
