package io.zkcoord.shard;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The spread of shards over members: a pure function of (shard count, live members in join order,
 * current owners) to the target owners. No I/O; unit-tested without a server.
 *
 * <p>What it promises, for a result {@code t = spread(n, members, current)}:
 * <ol>
 *   <li><b>Total and live.</b> With at least one member, every shard {@code 0..n-1} has an owner in
 *       {@code t}, and every owner is in {@code members}. With none, {@code t} is empty.
 *   <li><b>Balanced.</b> Every member owns {@code floor(n/m)} or {@code ceil(n/m)} shards.
 *   <li><b>Sticky.</b> A shard keeps its current owner unless that owner is gone or owns more than
 *       its quota. Quotas go first to the members that own most now (ties: earlier join first), so
 *       as few shards as possible move: a join moves only the newcomer's quota, at most {@code
 *       ceil(n/(m+1))}; a leave moves the leaver's shards and at most one more per member.
 *   <li><b>Deterministic.</b> The same input always gives the same output, on every member.
 * </ol>
 *
 * <p>Stateless and thread-safe.
 */
public final class ShardSpread {

    private ShardSpread() {
    }

    /**
     * @param shards the number of shards, at least 1
     * @param members the live members' ids, in join order, without duplicates
     * @param current who owns (or was last given) each shard; shards may be missing; owners that are
     *     not in {@code members} count as gone
     * @return shard to owner, sorted by shard; empty if {@code members} is empty
     * @throws IllegalArgumentException if {@code shards < 1}, an argument is null, or {@code
     *     members} has a duplicate
     */
    public static Map<Integer, String> spread(int shards, List<String> members, Map<Integer, String> current) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, was " + shards);
        }
        if (members == null || current == null) {
            throw new IllegalArgumentException("members and current must not be null");
        }
        Map<String, Integer> joinOrder = new HashMap<>();
        for (String m : members) {
            if (m == null || joinOrder.putIfAbsent(m, joinOrder.size()) != null) {
                throw new IllegalArgumentException("members must be distinct and not null: " + members);
            }
        }
        Map<Integer, String> target = new TreeMap<>();
        if (members.isEmpty()) {
            return target;
        }
        // 1. What each live member keeps for now: its current shards, lowest first.
        Map<String, TreeSet<Integer>> kept = new LinkedHashMap<>();
        for (String m : members) {
            kept.put(m, new TreeSet<>());
        }
        for (Map.Entry<Integer, String> e : current.entrySet()) {
            int shard = e.getKey();
            TreeSet<Integer> owned = kept.get(e.getValue());
            if (shard >= 0 && shard < shards && owned != null) {
                owned.add(shard);
            }
        }
        // 2. Quotas: floor(n/m) each, and the n mod m extra shards to those that own most now.
        int m = members.size();
        List<String> byLoad = new ArrayList<>(members);
        byLoad.sort(Comparator.<String>comparingInt(id -> kept.get(id).size()).reversed()
                .thenComparingInt(joinOrder::get));
        Map<String, Integer> quota = new HashMap<>();
        for (int i = 0; i < m; i++) {
            quota.put(byLoad.get(i), shards / m + (i < shards % m ? 1 : 0));
        }
        // 3. Over quota: the highest shards go back to the pool.
        for (String id : members) {
            TreeSet<Integer> owned = kept.get(id);
            while (owned.size() > quota.get(id)) {
                owned.pollLast();
            }
            for (int shard : owned) {
                target.put(shard, id);
            }
        }
        // 4. The pool (shards of nobody live, or given back), lowest first, to members under quota in join order.
        int next = 0;
        for (String id : members) {
            int missing = quota.get(id) - kept.get(id).size();
            while (missing > 0) {
                while (target.containsKey(next)) {
                    next++;
                }
                target.put(next, id);
                missing--;
            }
        }
        return target;
    }
}
