package io.zkcoord.examples.scheduledjob;

import io.zkcoord.ZkClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.CreateMode;

/**
 * Counts what {@link ScheduledJobApplication} logs while ZooKeeper is down, for docs/logging.md:
 * one application process with Spring Boot's default logging (console, INFO) and its
 * {@code @SchedulerLock} job every 2 s; once it has run a tick, the ZooKeeper server process is
 * stopped for {@code --seconds} (default 100), then started again; the program prints how many
 * lines the application wrote during the outage, and until its next tick, by logger and level.
 *
 * <p>{@code mvn -B -q -f examples/scheduled-job/pom.xml compile exec:exec -Ddemo=OutageLog
 * -Ddemo.args="--seconds 100 [--quiet]"}: {@code --quiet} adds the levels docs/logging.md
 * recommends ({@code org.apache.zookeeper=ERROR}).
 */
public final class OutageLog {

    private OutageLog() {
    }

    public static void main(String[] args) throws Exception {
        List<String> arguments = List.of(args);
        int at = arguments.indexOf("--seconds");
        int seconds = at >= 0 ? Integer.parseInt(arguments.get(at + 1)) : 100;
        boolean quiet = arguments.contains("--quiet");
        List<Process> children = new CopyOnWriteArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));
        Path dataDir = Files.createTempDirectory("zkcoord-outage-log");
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        String connect = "127.0.0.1:" + port;
        Process server = start(children, DemoServer.class, null, String.valueOf(port), dataDir.toString());
        try (ZkClient client = ZkClient.builder().connectString(connect).connectionTimeout(Duration.ofSeconds(30)).build()) {
            for (String dir : List.of("/demo", "/demo/runs", "/demo/ready")) {
                client.zooKeeper().create(dir, new byte[0], client.aclFor(dir), CreateMode.PERSISTENT);
            }
        }
        // Boot's defaults (the application's own properties quieten ZooKeeper; put them back), or the
        // levels docs/logging.md recommends: ZooKeeper's client at ERROR, zkcoord's lines left as they are.
        List<String> appArgs = new ArrayList<>(List.of("--zkcoord.connect-string=" + connect, "--demo.process=app",
                "--logging.config=classpath:outage-logback.xml", "--logging.level.root=INFO",
                "--spring.output.ansi.enabled=never",
                "--logging.level.org.apache.zookeeper=" + (quiet ? "ERROR" : "INFO")));
        List<String> lines = new CopyOnWriteArrayList<>();
        Process app = start(children, ScheduledJobApplication.class, lines, appArgs.toArray(String[]::new));
        awaitTick(lines, 0, Duration.ofSeconds(90));

        int before = lines.size();
        System.out.println("outage-log: stopping ZooKeeper for " + seconds + " s");
        server.destroyForcibly().waitFor();
        Thread.sleep(seconds * 1000L);   // the outage being measured
        int during = lines.size();
        System.out.println("outage-log: starting ZooKeeper again");
        server = start(children, DemoServer.class, null, String.valueOf(port), dataDir.toString());
        awaitTick(lines, during, Duration.ofSeconds(90));
        int after = lines.size();
        app.destroy();
        server.destroy();

        List<String> outage = lines.subList(before, during);
        List<String> recovery = lines.subList(during, after);
        System.out.println("outage-log: " + (quiet ? "with the recommended levels" : "Boot's default levels"));
        System.out.println("outage-log: lines during the " + seconds + " s outage: " + outage.size() + summary(outage));
        System.out.println("outage-log: lines from the restart to the next tick: " + recovery.size() + summary(recovery));
        System.out.println("outage-log: the outage's log lines by logger (a stack trace counts with its line):");
        byLogger(outage).forEach((logger, n) -> System.out.println("    " + n + "  " + logger));
        System.out.println("outage-log: the outage's lines, each kind once:");
        outage.stream().map(OutageLog::kind).distinct().forEach(k -> System.out.println("    " + k));
        System.exit(0);
    }

    /** @return how many lines each logger wrote, its stack traces counted with it, most first */
    private static Map<String, Integer> byLogger(List<String> lines) {
        Map<String, Integer> counts = new HashMap<>();
        String current = "(other)";
        for (String line : lines) {
            Matcher m = LOG_LINE.matcher(line);
            if (m.find()) {
                current = m.group(1) + " " + m.group(2);
            }
            counts.merge(current, 1, Integer::sum);
        }
        Map<String, Integer> sorted = new LinkedHashMap<>();
        counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /** Boot's console pattern: level, pid, ---, [thread], logger, ':' */
    private static final Pattern LOG_LINE =
            Pattern.compile("^\\S+\\s+(TRACE|DEBUG|INFO|WARN|ERROR)\\s+\\d+ --- \\[[^\\]]*\\] (\\S+)\\s+:");

    private static String summary(List<String> lines) {
        long warn = lines.stream().filter(l -> l.contains(" WARN ")).count();
        long error = lines.stream().filter(l -> l.contains(" ERROR ")).count();
        long info = lines.stream().filter(l -> l.contains(" INFO ")).count();
        long trace = lines.stream().filter(l -> l.startsWith("\t") || l.startsWith("Caused by") || l.startsWith("java.")
                || l.startsWith("org.") || l.startsWith("io.")).count();
        return " (INFO " + info + ", WARN " + warn + ", ERROR " + error + ", stack-trace lines " + trace + ")";
    }

    /** @return the line without its time, thread and numbers: what kind of line it is */
    private static String kind(String line) {
        String k = line.replaceFirst("^\\S+\\s+", "").replaceAll("\\[[^\\]]*\\]", "[]").replaceAll("\\d+", "N");
        return k.length() > 160 ? k.substring(0, 160) : k;
    }

    private static void awaitTick(List<String> lines, int from, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (lines.subList(from, lines.size()).stream().anyMatch(l -> l.contains(" runs tick "))) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("no tick within " + limit.toSeconds() + " s");
    }

    private static Process start(List<Process> children, Class<?> main, List<String> lines, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (lines == null) {
            builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        Process process = builder.start();
        children.add(process);
        if (lines != null) {
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, "outage-log-reader");
            reader.setDaemon(true);
            reader.start();
        }
        return process;
    }
}
