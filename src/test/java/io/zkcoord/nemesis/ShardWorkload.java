package io.zkcoord.nemesis;

import io.zkcoord.election.RevokeReason;
import io.zkcoord.shard.ShardListener;
import io.zkcoord.shard.ZkShardMember;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * Shard ownership: the process is a member of {@link ZkShardMember} {@code <dir>/group} with {@link #SHARDS}
 * shards. Each shard is checked as a workload of its own, {@code shard<k>}: {@code event elected} / {@code event
 * revoked} on {@code <dir>/shard-<k>} with the shard's token, and while it owns a shard the member increments
 * that shard's register {@code <dir>/register-<k>}, fenced by the token. After one to three seconds the member
 * leaves ({@code close()}) and joins again, so shards move without faults too.
 */
final class ShardWorkload extends Workload {

    static final int SHARDS = 3;

    private final String group;
    private final String member;

    ShardWorkload(String name, Settings settings) {
        super(name, settings);
        this.group = dir + "/group";
        this.member = settings.process();
        // The checker reads a hold's warnings (SUSPENDED, LOST) under the hold's own workload name.
        client.addConnectionListener(state -> {
            for (String w : names()) {
                history.record(w, "event", "conn", dir, 0, sessionOf(client), state.name());
            }
        });
    }

    /** @return the workload name of each shard, as the checker sees them */
    static List<String> names() {
        return IntStream.range(0, SHARDS).mapToObj(k -> "shard" + k).toList();
    }

    /** @return the path a shard's holds are checked on */
    static String holdPath(String dir, int shard) {
        return dir + "/shard-" + shard;
    }

    /** @return the register of a shard */
    static String register(String dir, int shard) {
        return dir + "/register-" + shard;
    }

    @Override
    void cycle() throws InterruptedException {
        ZkShardMember m = new ZkShardMember(client, group, member, SHARDS);
        m.addListener(new ShardListener() {
            @Override
            public void assigned(int shard, long token) {
                history.record("shard" + shard, "event", "elected", holdPath(dir, shard), token, sessionOf(client), "");
            }

            @Override
            public void revoked(int shard, long token, RevokeReason reason) {
                history.record("shard" + shard, "event", "revoked", holdPath(dir, shard), token, sessionOf(client),
                        reason.name());
            }
        });
        history.record(name, "event", "join", group, 0, sessionOf(client), member);
        try {
            m.start();
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1000 + random.nextInt(2000));
            while (!stopping() && System.nanoTime() < until) {
                Set<Integer> owned = m.owned();
                for (int shard : owned) {
                    long token = m.token(shard).orElse(-1);
                    if (token >= 0) {
                        Register.increment(dataClient.zooKeeper(), history, "shard" + shard, register(dir, shard), token,
                                sessionOf(client), Register.Guard.FENCED, null);
                    }
                }
                pace(50, 150);
            }
        } finally {
            m.close();
            history.record(name, "event", "left", group, 0, sessionOf(client), member);
        }
        pace(100, 500);
    }
}
