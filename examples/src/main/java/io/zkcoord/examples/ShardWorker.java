package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.shard.ShardListener;
import io.zkcoord.shard.ZkShardMember;
import java.time.Duration;
import java.util.Set;

/**
 * One worker of {@link ShardDemo}, in a JVM of its own: joins {@link ZkShardMember} {@code
 * /demo/shards} and prints what it owns once a second until it is stopped.
 *
 * <p>For the parent, one machine line per event, stamped on the demo's time axis: {@code EVENT
 * assigned <ms> <shard> <token>} and {@code EVENT revoked <ms> <shard> <token> <reason>}.
 *
 * <p>Stopped with SIGTERM it closes its member (every shard revoked and released, then it leaves);
 * killed with SIGKILL it does nothing: its shards move when the ensemble expires its session.
 */
public final class ShardWorker {

    private static final String USAGE =
            "usage: ShardWorker --connect host:port,... --name NAME --t0 MILLIS --shards N [--session-ms MS]";
    static final String EVENT = "EVENT ";

    private ShardWorker() {
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, Set.of("--connect", "--name", "--t0", "--shards", "--session-ms"), Set.of(), USAGE);
        String name = options.require("--name");
        Timeline timeline = new Timeline(Long.parseLong(options.require("--t0")));
        long sessionMillis = Long.parseLong(options.value("--session-ms").orElse("4000"));
        ZkClient client = ZkClient.builder()
                .connectString(options.require("--connect"))
                .sessionTimeout(Duration.ofMillis(sessionMillis))
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100)))
                .build();
        ZkShardMember member = new ZkShardMember(client, ShardDemo.PATH, name, Integer.parseInt(options.require("--shards")));
        member.addListener(new ShardListener() {
            @Override
            public void assigned(int shard, long fencingToken) {
                timeline.line(EVENT + "assigned " + timeline.now() + " " + shard + " " + fencingToken);
            }

            @Override
            public void revoked(int shard, long fencingToken, RevokeReason reason) {
                timeline.line(EVENT + "revoked " + timeline.now() + " " + shard + " " + fencingToken + " " + reason);
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            member.close();
            client.close();
        }, "worker-shutdown"));
        member.start();
        timeline.say(name, "joined %s: pid %d, session 0x%x (timeout %d ms)", ShardDemo.PATH, ProcessHandle.current().pid(),
                client.sessionId(), sessionMillis);
        for (;;) {
            Thread.sleep(1_000);
            timeline.say(name, "owns %s", member.owned());
        }
    }
}
