package io.zkcoord.nemesis;

import io.zkcoord.election.LeadershipListener;
import io.zkcoord.election.RevokeReason;
import io.zkcoord.election.ZkLeaderElection;
import java.util.concurrent.TimeUnit;

/**
 * Leader election: a participant joins ({@code invoke acquire}), hears {@code event elected} / {@code event
 * revoked} with its epoch, and while it believes it leads it increments the register fenced by its epoch every
 * ~100 ms. After leading one to three seconds it resigns ({@code close()}, {@code release}) and joins again, so
 * leadership moves without faults too.
 */
final class ElectionWorkload extends Workload {

    private final String electionPath;
    private final String register;
    private final String participant;

    ElectionWorkload(String name, Settings settings) {
        super(name, settings);
        this.electionPath = dir + "/election";
        this.register = dir + "/register";
        this.participant = settings.process() + "/" + name;
    }

    @Override
    void cycle() throws InterruptedException {
        ZkLeaderElection election = new ZkLeaderElection(client, electionPath, participant);
        election.addListener(new LeadershipListener() {
            @Override
            public void elected(long epoch) {
                history.record(name, "event", "elected", electionPath, epoch, sessionOf(client), "");
            }

            @Override
            public void revoked(long epoch, RevokeReason reason) {
                history.record(name, "event", "revoked", electionPath, epoch, sessionOf(client), reason.name());
            }
        });
        history.record(name, "invoke", "acquire", electionPath, 0, sessionOf(client), "join");
        election.start();
        long ledNanos = 0;
        long resignAfter = TimeUnit.MILLISECONDS.toNanos(1000 + random.nextInt(2000));
        try {
            while (!stopping() && ledNanos < resignAfter) {
                long before = System.nanoTime();
                long epoch = -1;
                try {
                    epoch = election.isLeader() ? election.epoch() : -1;
                } catch (IllegalStateException e) {
                    // stepped down between the two calls
                }
                if (epoch >= 0) {
                    Register.increment(dataClient.zooKeeper(), history, name, register, epoch, sessionOf(client),
                            Register.Guard.FENCED, null);
                    pace(50, 150);
                    ledNanos += System.nanoTime() - before;
                } else {
                    election.awaitLeadership(java.time.Duration.ofMillis(200));
                }
            }
        } finally {
            history.record(name, "invoke", "release", electionPath, 0, sessionOf(client), "resign");
            election.close();
            history.record(name, "ok", "release", electionPath, 0, sessionOf(client), "resign");
        }
    }
}
