package io.zkcoord.cli;

import io.zkcoord.CoordinationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code zkcoord} command: {@code inspect} a queue directory, {@code run} a command under a
 * lock. Exit statuses are in {@link ExitStatus}.
 */
@Command(name = "zkcoord", mixinStandardHelpOptions = true, versionProvider = Zkcoord.Version.class,
        description = "Inspect zkcoord lock queues and run commands under distributed locks (ZooKeeper).",
        subcommands = {InspectCommand.class, RunCommand.class, CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit status:%n")
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
        cl.getCommandSpec().usageMessage().exitCodeList(ExitStatus.forAll());
        exitCodes(cl.getSubcommands().get("inspect"), ExitStatus.forInspect());
        exitCodes(cl.getSubcommands().get("run"), ExitStatus.forRun());
        return cl;
    }

    private static void exitCodes(CommandLine sub, Map<String, String> codes) {
        sub.getCommandSpec().usageMessage().exitCodeListHeading("%nExit status:%n").exitCodeList(codes);
    }

    /** Bad arguments: one line saying what is wrong, then the usage; exit 2. */
    private static int badArguments(CommandLine.ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        String message = oneLine(e.getMessage());
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
            message += " (did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?)";
        }
        err.println("zkcoord: " + (message.startsWith("Error: ") ? message.substring("Error: ".length()) : message));
        usage(cl, err);
        return ExitStatus.USAGE;
    }

    /**
     * A failure while running. A setting the library refused (say, the connect string's syntax):
     * one line, exit 2. ZooKeeper failed us: the library's message and the causes it names, a few
     * lines and never a stack trace, exit 69. Anything else is a bug: the stack trace, exit 1.
     */
    private static int failed(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        PrintWriter err = cl.getErr();
        if (e instanceof IllegalArgumentException) {
            err.println("zkcoord: " + oneLine(e.getMessage()));
            err.flush();
            return ExitStatus.USAGE;
        }
        if (e instanceof io.zkcoord.NotAuthorizedException) {
            err.println("zkcoord: " + oneLine(e.getMessage()));
            err.flush();
            return ExitStatus.NOT_AUTHORIZED;
        }
        if (e instanceof CoordinationException || e instanceof IllegalStateException) {
            err.println("zkcoord: " + oneLine(e.getMessage()));
            String said = String.valueOf(e.getMessage());
            int shown = 0;
            for (Throwable c = e.getCause(); c != null && c != c.getCause() && shown < MAX_CAUSES; c = c.getCause()) {
                if (c.getMessage() == null || said.contains(c.getMessage())) {
                    continue; // says nothing the message above does not
                }
                err.println("zkcoord:   because of " + c.getClass().getSimpleName() + ": " + oneLine(c.getMessage()));
                said += c.getMessage();
                shown++;
            }
            err.flush();
            return ExitStatus.UNAVAILABLE;
        }
        err.println("zkcoord: " + e);
        e.printStackTrace(err);
        err.flush();
        return 1;
    }

    /** At most this many causes are shown under a failure's message. */
    private static final int MAX_CAUSES = 2;

    private static String oneLine(String message) {
        return String.valueOf(message).replace('\n', ' ').replace('\r', ' ');
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
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required (inspect, run, help)");
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
