package io.zkcoord.examples.scheduledjob;

import io.zkcoord.ZkClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * Runs {@link ScheduledJobApplication} in 3 processes against a local ZooKeeper server for about
 * 20 seconds, then checks that every tick in that window ran exactly once across them, and that
 * the fencing tokens grew from tick to tick. Exits 0 if so, 1 otherwise.
 *
 * <p>Arguments: {@code [--seconds N]} (default 20) {@code [--no-lock]} (the applications run the
 * job without ShedLock's lock: ticks run several times and the demo exits 1).
 */
public final class ScheduledJobDemo {

    private static final int APPS = 3;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

    private ScheduledJobDemo() {
    }

    public static void main(String[] args) throws Exception {
        List<String> arguments = List.of(args);
        int at = arguments.indexOf("--seconds");
        int seconds = at >= 0 ? Integer.parseInt(arguments.get(at + 1)) : 20;
        boolean noLock = arguments.contains("--no-lock");
        List<Process> children = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));
        Path dataDir = Files.createTempDirectory("zkcoord-scheduled-job");
        int port = freePort();
        String connect = "127.0.0.1:" + port;
        boolean ok;
        try {
            say("starting a ZooKeeper server on " + connect);
            children.add(java(DemoServer.class, String.valueOf(port), dataDir.toString()));
            try (ZkClient client = ZkClient.builder().connectString(connect).connectionTimeout(Duration.ofSeconds(30)).build()) {
                ZooKeeper zk = client.zooKeeper();
                for (String dir : List.of("/demo", "/demo/runs", "/demo/ready")) {
                    zk.create(dir, new byte[0], client.aclFor(dir), CreateMode.PERSISTENT);
                }
                say("starting " + APPS + " instances of the application");
                for (int i = 1; i <= APPS; i++) {
                    children.add(java(ScheduledJobApplication.class, "--zkcoord.connect-string=" + connect,
                            "--demo.process=app-" + i, "--demo.no-lock=" + noLock));
                }
                waitForReady(zk, children);
                long firstTick = System.currentTimeMillis() / TickJob.PERIOD_MILLIS + 1;
                say("all " + APPS + " are up; counting the runs of ticks from " + firstTick + " for " + seconds + " s");
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
                long lastTick = System.currentTimeMillis() / TickJob.PERIOD_MILLIS - 1;
                ok = check(zk, firstTick, lastTick, noLock);
            }
        } finally {
            for (Process child : children) {
                child.destroy();
            }
            for (Process child : children) {
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
            deleteRecursively(dataDir);
        }
        System.exit(ok ? 0 : 1);
    }

    /** Reads every run and checks: each tick of the window ran exactly once, no tick ever twice, tokens grow. */
    private static boolean check(ZooKeeper zk, long firstTick, long lastTick, boolean noLock) throws KeeperException, InterruptedException {
        Map<Long, List<String>> runs = new TreeMap<>();
        Map<Long, Long> tokens = new TreeMap<>();
        for (String child : zk.getChildren("/demo/runs", false)) {
            String record = new String(zk.getData("/demo/runs/" + child, false, null), StandardCharsets.UTF_8);
            Map<String, String> fields = new TreeMap<>();
            for (String field : record.split(" ")) {
                String[] kv = field.split("=", 2);
                fields.put(kv[0], kv[1]);
            }
            long tick = Long.parseLong(fields.get("tick"));
            runs.computeIfAbsent(tick, t -> new ArrayList<>()).add(fields.get("process"));
            tokens.put(tick, Long.parseLong(fields.get("token")));
        }
        System.out.println();
        System.out.println("Runs per tick (ticks " + firstTick + " to " + lastTick + " must run exactly once):");
        boolean ok = lastTick - firstTick >= 3;
        if (!ok) {
            System.out.println("  too few ticks in the window to judge");
        }
        for (long tick = Math.min(firstTick, runs.isEmpty() ? firstTick : runs.keySet().iterator().next());
                tick <= Math.max(lastTick, runs.isEmpty() ? lastTick : ((TreeMap<Long, List<String>>) runs).lastKey()); tick++) {
            List<String> by = runs.getOrDefault(tick, List.of());
            boolean inWindow = tick >= firstTick && tick <= lastTick;
            String verdict = by.size() > 1 ? "RAN " + by.size() + " TIMES" : by.isEmpty() ? (inWindow ? "MISSED" : "") : "";
            if ((inWindow && by.size() != 1) || by.size() > 1) {
                ok = false;
            }
            System.out.printf("  tick %d (%s)  %-24s %s%n", tick,
                    TIME.format(LocalTime.ofInstant(Instant.ofEpochMilli(tick * TickJob.PERIOD_MILLIS), ZoneOffset.UTC)),
                    by.isEmpty() ? "-" : String.join(", ", by), verdict);
        }
        long previous = Long.MIN_VALUE;
        for (long token : noLock ? List.<Long>of() : tokens.values()) {
            if (token <= previous) {
                System.out.println("  fencing tokens did not grow from tick to tick: " + tokens);
                ok = false;
            }
            previous = token;
        }
        System.out.println(ok ? "OK: every tick ran exactly once across " + APPS + " processes, with growing fencing tokens."
                : "FAILED: some tick ran more than once, or was missed.");
        return ok;
    }

    private static void waitForReady(ZooKeeper zk, List<Process> children) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (zk.getChildren("/demo/ready", false).size() < APPS) {
            for (Process child : children) {
                if (!child.isAlive()) {
                    throw new IllegalStateException("a child process exited with status " + child.exitValue());
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the applications did not start within 120 s");
            }
            Thread.sleep(100);
        }
    }

    private static Process java(Class<?> main, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xss512k", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void say(String line) {
        System.out.println("demo: " + line);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
