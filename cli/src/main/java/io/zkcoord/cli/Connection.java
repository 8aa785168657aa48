package io.zkcoord.cli;

import io.zkcoord.ZkClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.zookeeper.client.ZKClientConfig;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options every subcommand shares: where ZooKeeper is, the session's timeouts, and how to
 * reach a secured ensemble (a ZooKeeper client properties file for TLS and SASL, an authentication
 * for digest ACLs).
 */
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

    /** The environment variable that gives {@code --client-config} when the option is absent. */
    static final String CLIENT_CONFIG_ENVIRONMENT = "ZKCOORD_CLIENT_CONFIG";
    /** The environment variable that gives {@code --auth} when the option is absent. */
    static final String AUTH_ENVIRONMENT = "ZKCOORD_AUTH";

    @Option(names = "--client-config", paramLabel = "FILE", defaultValue = "${env:" + CLIENT_CONFIG_ENVIRONMENT + "}",
            description = "A ZooKeeper client properties file, as zkCli.sh -client-configuration takes: TLS "
                    + "(zookeeper.client.secure=true, zookeeper.clientCnxnSocket=org.apache.zookeeper."
                    + "ClientCnxnSocketNetty, zookeeper.ssl.keyStore.*, zookeeper.ssl.trustStore.*), SASL "
                    + "(zookeeper.sasl.clientconfig). Default: the environment variable " + CLIENT_CONFIG_ENVIRONMENT
                    + ".")
    Path clientConfig;

    @Option(names = "--auth", paramLabel = "SCHEME:CREDENTIALS", defaultValue = "${env:" + AUTH_ENVIRONMENT + "}",
            description = "Adds an authentication to the session, e.g. digest:USER:PASSWORD. CREDENTIALS of the form "
                    + "@FILE are read from FILE (its first line). An option's value shows in ps: prefer @FILE or the "
                    + "environment variable " + AUTH_ENVIRONMENT + ", the default.")
    String auth;

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
        return open(true);
    }

    /**
     * As {@link #open()}, for a subcommand that only reads: a chroot of the connect string that
     * does not exist is left missing (a mistyped chroot must not appear on the ensemble).
     *
     * @return a connected client that creates nothing by itself
     */
    ZkClient openReadOnly() {
        return open(false);
    }

    private ZkClient open(boolean createChroot) {
        require();
        ZkClient.Builder builder = ZkClient.builder();
        try {
            builder.connectString(connectString);
        } catch (IllegalArgumentException e) {
            // The library names its setter; the user typed --connect (or the variable).
            throw new IllegalArgumentException(e.getMessage().replaceFirst("^connectString ", "--connect "), e);
        }
        builder.createChroot(createChroot)
                .sessionTimeout(sessionTimeout.isZero() ? Duration.ofMillis(1) : sessionTimeout)
                .connectionTimeout(connectTimeout.isZero() ? Duration.ofMillis(1) : connectTimeout);
        if (clientConfig != null && !clientConfig.toString().isBlank()) { // an empty variable is no setting
            builder.clientConfig(clientProperties(clientConfig));
        }
        if (auth != null && !auth.isBlank()) {
            int colon = auth.indexOf(':');
            if (colon <= 0 || colon == auth.length() - 1) {
                // The value is not repeated: it may hold a password.
                throw new IllegalArgumentException("--auth (or " + AUTH_ENVIRONMENT + ") must be SCHEME:CREDENTIALS,"
                        + " e.g. digest:USER:PASSWORD or digest:@FILE");
            }
            builder.authorization(auth.substring(0, colon), credentials(auth.substring(colon + 1)));
        }
        return builder.build();
    }

    /** @return the client settings of a properties file, read as ZooKeeper's own tools read it */
    private static ZKClientConfig clientProperties(Path file) {
        try {
            return new ZKClientConfig(file.toString());
        } catch (Exception e) {
            throw new IllegalArgumentException("cannot read --client-config " + file + ": " + e.getMessage(), e);
        }
    }

    /** @return the credentials as given, or the first line of the file {@code @FILE} names */
    private static byte[] credentials(String given) {
        if (!given.startsWith("@")) {
            return given.getBytes(StandardCharsets.UTF_8);
        }
        Path file = Path.of(given.substring(1));
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            String first = text.lines().findFirst().orElse("").strip();
            if (first.isEmpty()) {
                throw new IllegalArgumentException("the credentials file " + file + " of --auth is empty");
            }
            return first.getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the credentials file " + file + " of --auth: "
                    + e.getClass().getSimpleName(), e);
        }
    }
}
