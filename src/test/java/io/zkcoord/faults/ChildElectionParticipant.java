package io.zkcoord.faults;

import io.zkcoord.ZkClient;
import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The leader JVM of {@link ElectionFaultTest}'s SIGKILL scenario, run as a child {@code java} process:
 * connects, joins the election, and once its listener is told {@code elected} prints {@code LEADS <session id>
 * <epoch>} on stdout (the only line it ever prints there; logs go to stderr), then sleeps until it is killed.
 * If it is not elected within 30 s it prints {@code NOT-ELECTED} and exits with status 1.
 *
 * <p>Arguments: {@code <connect string> <election path> <participant id> <session timeout ms>}.
 */
public final class ChildElectionParticipant {

    private static final Duration ELECTION_WAIT = Duration.ofSeconds(30);

    private ChildElectionParticipant() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 4) {
            System.err.println("usage: ChildElectionParticipant <connect string> <election path> <participant id>"
                    + " <session timeout ms>");
            System.exit(2);
        }
        ZkClient client = FaultFixtures.client(args[0], Duration.ofMillis(Long.parseLong(args[3])));
        ZkLeaderElection election = new ZkLeaderElection(client, args[1], args[2]);
        CompletableFuture<Long> elected = new CompletableFuture<>();
        election.addListener(new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                elected.complete(epoch);
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                System.err.println("revoked " + epoch + " " + reason); // unexpected before the kill; the test sees no LEADS
            }
        });
        election.start(); // never closed: the node goes only with the session
        long epoch;
        try {
            epoch = elected.get(ELECTION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            System.out.println("NOT-ELECTED");
            System.out.flush();
            System.exit(1);
            return;
        }
        System.out.println("LEADS " + client.sessionId() + " " + epoch);
        System.out.flush();
        for (;;) {
            new java.util.concurrent.CountDownLatch(1).await(); // until SIGKILL: no shutdown hook, no close
        }
    }
}
