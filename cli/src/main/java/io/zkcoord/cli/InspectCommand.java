package io.zkcoord.cli;

import io.zkcoord.ZkClient;
import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code zkcoord inspect}: who holds a queue directory, since when, and who waits. */
@Command(name = "inspect", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Shows who holds the lock (semaphore, election, ...) at PATH, since when, and who waits, in queue order.",
            "Works for every zkcoord recipe's directory; two ZooKeeper reads whatever the queue length.",
            "Says so when PATH does not exist (nothing holds or waits there: the locks delete an idle lock's "
                + "directory), and when it is not a lock directory (a parent of lock directories, say)."
        })
final class InspectCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(index = "0", paramLabel = "PATH", description = "The lock's path, e.g. /locks/nightly-export.")
    String path;

    @Option(names = "--json", description = "Print the snapshot as JSON instead of a table.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        connection.require();
        QueueSnapshot snapshot;
        try (ZkClient client = connection.open()) {
            snapshot = Inspector.inspect(client, path);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? SnapshotFormat.json(snapshot) : SnapshotFormat.table(snapshot));
        out.flush();
        return ExitStatus.OK;
    }
}
