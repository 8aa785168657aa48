package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.shard.ZkShardMember;
import io.zkcoord.testing.SessionExpiry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Section {@code shards}: what a membership change costs the ensemble, and how long until the
 * shards are balanced again, at 10, 100 and 1,000 shards over 3 and 10 members. For each change
 * (a join, a clean leave, a death: the session expired on the server and the process gone; its
 * time counts from the expiry, so a real crash adds the session timeout) it
 * counts the requests and watch notifications the server saw from the change until the counters
 * settle, and the shards that changed owner.
 *
 * <p>Clients use 30 s sessions so that pings (one per client every 10 s) barely touch the counts.
 */
final class ShardBench {

    private static final Duration BALANCE_WAIT = Duration.ofSeconds(60);

    private final String connect;
    private final ServerCounters counters;
    private final PrintStream out;
    private final PrintStream progress;
    private int round;

    ShardBench(String connect, ServerCounters counters, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.counters = counters;
        this.out = out;
        this.progress = progress;
    }

    private record Node(ZkClient client, ZkShardMember member) {
        void close() {
            member.close();
            client.close();
        }
    }

    void run() throws Exception {
        out.println();
        out.println("8. Shards: one membership change, at rest before and after (ZkShardMember)");
        out.println("   shards  members  change  moved  requests  notifications  requests/moved  ms to balanced");
        for (int shards : new int[] {10, 100, 1000}) {
            for (int members : new int[] {3, 10}) {
                progress.printf("8. shards %d over %d members ...%n", shards, members);
                one(shards, members);
            }
        }
    }

    private void one(int shards, int memberCount) throws Exception {
        String path = "/bench/shards-" + (++round);
        List<Node> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < memberCount; i++) {
                nodes.add(start(path, "w" + i, shards));
            }
            awaitBalanced(nodes, shards);
            change(shards, memberCount, "join", nodes, () -> {
                nodes.add(start(path, "w" + memberCount, shards));
                return null;
            });
            change(shards, memberCount + 1, "leave", nodes, () -> {
                nodes.remove(nodes.size() - 1).close();
                return null;
            });
            change(shards, memberCount, "death", nodes, () -> {
                Node dead = nodes.remove(0);
                // The time to balance counts from the session's end: when a survivor's watch hears the dead
                // member's node go (the server deletes it as it expires the session).
                java.util.concurrent.CompletableFuture<Long> gone = new java.util.concurrent.CompletableFuture<>();
                String memberNode = path + "/members/m-" + dead.member().memberId();
                nodes.get(0).client().zooKeeper().exists(memberNode, event -> gone.complete(System.nanoTime()));
                SessionExpiry.expireOnServer(dead.client().zooKeeper(), connect, Duration.ofSeconds(30));
                long expired = gone.get(30, TimeUnit.SECONDS);
                // The process is gone: no new session, no rejoin. Closing its client takes up to a second
                // (its handle is cut off), so it is done aside, not in the time measured.
                Thread closer = new Thread(() -> {
                    dead.client().close();
                    dead.member().close();
                }, "dead-member");
                closer.start();
                return expired;
            });
        } finally {
            nodes.forEach(Node::close);
        }
    }

    private interface Change {
        /** @return when the change took effect ({@code System.nanoTime()}), or null for "when apply was called" */
        Long apply() throws Exception;
    }

    private void change(int shards, int membersBefore, String name, List<Node> nodes, Change change) throws Exception {
        Map<Integer, String> before = owners(nodes);
        ServerCounters.Snapshot s0 = counters.settled();
        long called = System.nanoTime();
        Long effective = change.apply();
        long t0 = effective == null ? called : effective;
        awaitBalanced(nodes, shards);
        long balancedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        ServerCounters.Snapshot s1 = counters.settled();
        Map<Integer, String> after = owners(nodes);
        int moved = 0;
        for (Map.Entry<Integer, String> e : after.entrySet()) {
            if (!e.getValue().equals(before.get(e.getKey()))) {
                moved++;
            }
        }
        long requests = counters.requests(s0, s1);
        out.printf("   %6d  %7d  %-6s  %5d  %8d  %13d  %14.1f  %14d%n", shards, membersBefore, name, moved, requests,
                ServerCounters.watchesFired(s0, s1), moved == 0 ? 0.0 : (double) requests / moved, balancedMs);
    }

    private Node start(String path, String id, int shards) {
        ZkClient client = ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(30)).build();
        ZkShardMember member = new ZkShardMember(client, path, id, shards);
        member.start();
        return new Node(client, member);
    }

    private static Map<Integer, String> owners(List<Node> nodes) {
        Map<Integer, String> owners = new HashMap<>();
        for (Node n : nodes) {
            for (int shard : n.member().owned()) {
                owners.put(shard, n.member().memberId());
            }
        }
        return owners;
    }

    private static void awaitBalanced(List<Node> nodes, int shards) throws InterruptedException {
        long deadline = System.nanoTime() + BALANCE_WAIT.toNanos();
        int m = nodes.size();
        while (System.nanoTime() < deadline) {
            Set<Integer> all = new HashSet<>();
            int total = 0;
            boolean balanced = true;
            for (Node n : nodes) {
                Set<Integer> owned = n.member().owned();
                balanced &= owned.size() == shards / m || owned.size() == (shards + m - 1) / m;
                all.addAll(owned);
                total += owned.size();
            }
            if (balanced && all.size() == shards && total == shards) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(2);
        }
        throw new IllegalStateException("not balanced within " + BALANCE_WAIT);
    }
}
