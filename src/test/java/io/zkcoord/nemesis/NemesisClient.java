package io.zkcoord.nemesis;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The client process of a nemesis run (a child JVM): runs the named workloads, one thread and one ZooKeeper
 * session each, recording every operation in its history file, until it reads {@code STOP} (or the end) on
 * stdin; then every workload ends its current cycle, releases and closes, and the process exits.
 *
 * <p>Arguments: {@code <process name> <connect string> <history file> <session ms> <base path> <seed>
 * <workload,workload,...>}.
 */
public final class NemesisClient {

    private NemesisClient() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: NemesisClient <process> <connect> <history file> <session ms> <base> <seed>"
                    + " <workloads>");
            System.exit(2);
        }
        String process = args[0];
        History.Writer history = new History.Writer(Path.of(args[2]), process);
        history.record("", "event", "started", "", 0, 0, "pid=" + ProcessHandle.current().pid());
        Workload.Settings settings = new Workload.Settings(process, args[1], Duration.ofMillis(Long.parseLong(args[3])),
                args[4], history, Long.parseLong(args[5]) ^ process.hashCode());
        List<Workload> workloads = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (String name : args[6].split(",")) {
            Workload w = Workload.of(name, settings);
            workloads.add(w);
            Thread t = new Thread(w, process + "-" + name);
            threads.add(t);
            t.start();
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("STOP"); line = in.readLine()) {
            // only STOP is understood
        }
        history.record("", "event", "stopping", "", 0, 0, "");
        workloads.forEach(Workload::stop);
        for (Thread t : threads) {
            t.join(60_000);
        }
        history.record("", "event", "exit", "", 0, 0, "");
        history.close();
        System.exit(0);
    }
}
