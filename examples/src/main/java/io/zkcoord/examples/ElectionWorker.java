package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.retry.RetryPolicy;
import java.time.Duration;
import java.util.Set;

/**
 * One worker of {@link ElectionDemo}, in a JVM of its own: connects, joins {@link ZkLeaderElection}
 * {@code /demo/election} with its name as participant id, and runs until it is stopped. While it
 * leads it prints {@code LEADS, epoch N} (decimal) once a second (the work a leader would do, stamped with
 * the epoch it would pass to the resources it writes).
 *
 * <p>Prints its events on the demo's timeline, and for the parent one machine line per leadership
 * event, stamped on the demo's time axis: {@code EVENT elected <ms> <epoch>} and {@code EVENT
 * revoked <ms> <epoch> <reason>}.
 *
 * <p>Stopped with SIGTERM (or when the demo ends), it closes its election first: a leader hears
 * {@code revoked(CLOSED)} and its node is deleted at once. Killed with SIGKILL it does nothing at
 * all; its node goes only when the ensemble expires its session.
 */
public final class ElectionWorker {

    private static final String USAGE =
            "usage: ElectionWorker --connect host:port,... --name NAME --t0 MILLIS [--session-ms MS]";
    static final String EVENT = "EVENT ";

    private ElectionWorker() {
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, Set.of("--connect", "--name", "--t0", "--session-ms"), Set.of(), USAGE);
        String name = options.require("--name");
        Timeline timeline = new Timeline(Long.parseLong(options.require("--t0")));
        long sessionMillis = Long.parseLong(options.value("--session-ms").orElse("4000"));
        // As DemoEnsemble.client, with a short session: a dead leader is replaced about this long after it died.
        ZkClient client = ZkClient.builder()
                .connectString(options.require("--connect"))
                .sessionTimeout(Duration.ofMillis(sessionMillis))
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100)))
                .build();
        timeline.say(name, "connected: pid %d, session 0x%x (timeout %d ms)", ProcessHandle.current().pid(),
                client.sessionId(), sessionMillis);

        ZkLeaderElection election = new ZkLeaderElection(client, ElectionDemo.ELECTION, name);
        election.addListener(new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                long now = timeline.now();
                timeline.line(EVENT + "elected " + now + " " + epoch);
                timeline.say(name, "ELECTED: now the leader, epoch %d", epoch);
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                long now = timeline.now();
                timeline.line(EVENT + "revoked " + now + " " + epoch + " " + reason);
                timeline.say(name, "REVOKED (%s): stops leading, epoch %d", reason, epoch);
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            election.close(); // a leader hears revoked(CLOSED) before this returns
            client.close();
        }, "worker-shutdown"));
        election.start();
        timeline.say(name, "joined the election %s", ElectionDemo.ELECTION);

        for (;;) {
            Thread.sleep(1_000);
            if (election.isLeader()) {
                try {
                    timeline.say(name, "LEADS, epoch %d", election.epoch());
                } catch (IllegalStateException e) {
                    // stepped down between the two calls: the listener says so
                }
            }
        }
    }
}
