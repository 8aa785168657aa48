package io.zkcoord.cli;

import io.zkcoord.CoordinationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code zkcoord} command: {@code inspect} a queue directory, {@code run} a command under a
 * lock. Exit statuses are in {@link ExitStatus}.
 */
@Command(name = "zkcoord", mixinStandardHelpOptions = true, versionProvider = Zkcoord.Version.class,
        description = "Inspect zkcoord lock queues and run commands under distributed locks (ZooKeeper).",
        subcommands = {InspectCommand.class, RunCommand.class},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {})
public final class Zkcoord implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** @return the exit status of the command line {@code args} */
    static int execute(String[] args) {
        CommandLine cl = commandLine();
        return cl.execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Zkcoord());
        // `zkcoord run --lock /x make -j4`: everything from the command on is the command's.
        cl.getSubcommands().get("run").setStopAtPositional(true);
        cl.setExecutionExceptionHandler(Zkcoord::failed);
        cl.setParameterExceptionHandler(Zkcoord::badArguments);
        for (CommandLine c : cl.getSubcommands().values()) {
            c.getCommandSpec().usageMessage().exitCodeListHeading("%nExit status:%n").exitCodeList(exitCodes());
        }
        cl.getCommandSpec().usageMessage().exitCodeList(exitCodes());
        return cl;
    }

    private static java.util.Map<String, String> exitCodes() {
        java.util.Map<String, String> codes = new java.util.LinkedHashMap<>();
        for (String line : ExitStatus.HELP) {
            String trimmed = line.strip();
            int space = trimmed.indexOf(' ');
            codes.put(trimmed.substring(0, space), trimmed.substring(space).strip());
        }
        return codes;
    }

    /** Bad arguments: one line saying what is wrong, then the usage; exit 2. */
    private static int badArguments(CommandLine.ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        String message = String.valueOf(e.getMessage()).replace('\n', ' ').replace('\r', ' ');
        err.println("zkcoord: " + (message.startsWith("Error: ") ? message.substring("Error: ".length()) : message));
        usage(cl, err);
        return ExitStatus.USAGE;
    }

    /** A failure while running: one line on stderr; exit 69 when ZooKeeper failed us, else 1. */
    private static int failed(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        PrintWriter err = cl.getErr();
        if (e instanceof CoordinationException || e instanceof IllegalStateException) {
            err.println("zkcoord: " + e.getMessage());
            err.flush();
            return ExitStatus.UNAVAILABLE;
        }
        if (e instanceof IllegalArgumentException) {
            err.println("zkcoord: " + e.getMessage());
            usage(cl, err);
            return ExitStatus.USAGE;
        }
        err.println("zkcoord: " + e);
        e.printStackTrace(err);
        err.flush();
        return 1;
    }

    /** The synopsis of {@code cl} and where the rest is. */
    private static void usage(CommandLine cl, PrintWriter err) {
        err.print("Usage: " + cl.getHelp().synopsis(0));
        err.println("Try '" + cl.getCommandSpec().qualifiedName() + " --help' for more.");
        err.flush();
    }

    @Override
    public void run() {
        // `zkcoord` alone: say what it can do.
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required (inspect, run)");
    }

    /** The version from the jar (filtered into zkcoord-cli.properties by Maven). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = Zkcoord.class.getResourceAsStream("/zkcoord-cli.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[] {"zkcoord " + p.getProperty("version", "unknown")
                    + " (Java " + System.getProperty("java.version") + ")"};
        }
    }
}
