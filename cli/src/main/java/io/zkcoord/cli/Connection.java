package io.zkcoord.cli;

import io.zkcoord.ZkClient;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The options every subcommand shares: where ZooKeeper is, and the session's timeouts. */
final class Connection {

    /** The environment variable that gives {@code --connect} when the option is absent. */
    static final String ENVIRONMENT = "ZKCOORD_CONNECT";

    @Option(names = "--connect", paramLabel = "HOST:PORT[,...]", defaultValue = "${env:" + ENVIRONMENT + "}",
            description = "The ZooKeeper ensemble, e.g. zk1:2181,zk2:2181,zk3:2181 (an optional /chroot at the end). "
                    + "Default: the environment variable " + ENVIRONMENT + "; one of the two is required.")
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

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec command;

    /**
     * Fails as bad arguments (exit 2) if neither {@code --connect} nor {@value #ENVIRONMENT} gives
     * the ensemble. Called first by every subcommand, before anything else happens.
     *
     * @throws CommandLine.ParameterException if no connect string is given
     */
    void require() {
        if (connectString == null || connectString.isBlank()) {
            throw new CommandLine.ParameterException(command.commandLine(),
                    "Missing required option: '--connect=HOST:PORT[,...]' (or the environment variable " + ENVIRONMENT
                            + ")");
        }
    }

    /**
     * @return a connected client
     * @throws IllegalArgumentException if the library refuses a setting (the connect string's syntax)
     * @throws io.zkcoord.CoordinationException if no session is established within the connect timeout
     */
    ZkClient open() {
        require();
        return ZkClient.builder()
                .connectString(connectString)
                .sessionTimeout(sessionTimeout.isZero() ? Duration.ofMillis(1) : sessionTimeout)
                .connectionTimeout(connectTimeout.isZero() ? Duration.ofMillis(1) : connectTimeout)
                .build();
    }
}
