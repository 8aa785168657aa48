package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * The ensemble a demo runs on: the one named by {@code --connect host:port,...}, or else a {@link
 * LocalEnsemble} the demo starts, and stops when it closes this.
 */
final class DemoEnsemble implements AutoCloseable {

    private final String connectString;
    private final LocalEnsemble local;

    private DemoEnsemble(String connectString, LocalEnsemble local) {
        this.connectString = connectString;
        this.local = local;
    }

    static DemoEnsemble open(Options options, Timeline timeline) throws IOException, InterruptedException {
        // A demo ends with whatever started it (mvn included), and its servers with it.
        ExitWithParent.exitWithParentProcess();
        Optional<String> connect = options.value("--connect");
        if (connect.isPresent()) {
            timeline.say("demo", "using the ensemble at %s", connect.get());
            return new DemoEnsemble(connect.get(), null);
        }
        LocalEnsemble local = LocalEnsemble.start(3, line -> timeline.say("ensemble", "%s", line));
        return new DemoEnsemble(local.connectString(), local);
    }

    String connectString() {
        return connectString;
    }

    /** @return the ensemble this demo started, if it started one */
    Optional<LocalEnsemble> local() {
        return Optional.ofNullable(local);
    }

    /**
     * A client as the demos use it: 10 s sessions, and retries for up to 30 s, long enough to ride
     * out a leader election.
     */
    static ZkClient client(String connectString) {
        return ZkClient.builder()
                .connectString(connectString)
                .sessionTimeout(Duration.ofSeconds(10))
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100)))
                .build();
    }

    @Override
    public void close() {
        if (local != null) {
            local.close();
        }
    }
}
