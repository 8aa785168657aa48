package io.zkcoord.cli;

import io.zkcoord.ZkClient;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The options every subcommand shares: where ZooKeeper is, and the session's timeouts. */
final class Connection {

    @Option(names = "--connect", required = true, paramLabel = "HOST:PORT[,...]",
            description = "The ZooKeeper ensemble, e.g. zk1:2181,zk2:2181,zk3:2181 (an optional /chroot at the end).")
    String connectString;

    @Option(names = "--session-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = Durations.Converter.class,
            description = "The ZooKeeper session timeout to ask for (default: ${DEFAULT-VALUE}). A holder cut off "
                    + "from the ensemble for this long loses its lock.")
    Duration sessionTimeout;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "15s",
            converter = Durations.Converter.class,
            description = "How long to try to reach ZooKeeper at start (default: ${DEFAULT-VALUE}); exit 69 after.")
    Duration connectTimeout;

    /**
     * @return a connected client
     * @throws io.zkcoord.CoordinationException if no session is established within the connect timeout
     */
    ZkClient open() {
        return ZkClient.builder()
                .connectString(connectString)
                .sessionTimeout(sessionTimeout.isZero() ? Duration.ofMillis(1) : sessionTimeout)
                .connectionTimeout(connectTimeout.isZero() ? Duration.ofMillis(1) : connectTimeout)
                .build();
    }
}
