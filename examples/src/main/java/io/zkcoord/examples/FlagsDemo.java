package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;

/**
 * The configuration demo (docs/cache.md): this process changes feature flags under {@code
 * /config/flags} (new flags, flips, a flag removed, one removed and made again at once); three
 * reader JVMs ({@link FlagsReader}) each keep a {@code ZkCache} of {@code /config} and print every
 * change as they see it. It exits non-zero unless every reader ends with exactly the flags the
 * ensemble holds.
 *
 * <p>{@code mvn -B -q -f examples/pom.xml compile exec:exec -Ddemo=FlagsDemo}
 */
public final class FlagsDemo {

    static final String CONFIG = "/config";
    static final String FLAGS = CONFIG + "/flags";
    private static final String USAGE = "usage: FlagsDemo [--connect host:port,...]\n"
            + "  without --connect it starts a local 3-server ensemble and stops it at the end";
    private static final int READERS = 3;
    private static final int CHANGES = 20;
    private static final long AGREE_SECONDS = 60;
    private static final long STOP_SECONDS = 15;

    private final Timeline timeline;
    private final String connectString;
    private final Map<String, Process> readers = new TreeMap<>();
    private final Map<String, String> lastState = new ConcurrentHashMap<>();
    private final List<Thread> relays = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    private FlagsDemo(Timeline timeline, String connectString) {
        this.timeline = timeline;
        this.connectString = connectString;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect"), Set.of(), USAGE);
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            status = new FlagsDemo(timeline, ensemble.connectString()).run() ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    private boolean run() throws Exception {
        timeline.line("");
        timeline.line("Flags demo: this process changes feature flags under " + FLAGS + "; " + READERS
                + " reader JVMs each keep a ZkCache of " + CONFIG + " and print what they see.");
        timeline.line("");
        try (ZkClient admin = DemoEnsemble.client(connectString)) {
            Znodes.deleteTree(admin, CONFIG);
            Znodes.create(admin, CONFIG, "", CreateMode.PERSISTENT);
            Znodes.create(admin, FLAGS, "", CreateMode.PERSISTENT);
            Znodes.create(admin, FLAGS + "/dark-mode", "off", CreateMode.PERSISTENT);
            try {
                for (int i = 1; i <= READERS; i++) {
                    start("reader-" + i);
                }
                awaitAgreement(admin, "the readers loaded the flags");
                change(admin);
                awaitAgreement(admin, "every reader ends with the ensemble's flags");
            } finally {
                stopReaders();
            }
        }
        if (problems.isEmpty()) {
            timeline.say("demo", "OK: %d readers ended with the same flags as the ensemble", READERS);
            return true;
        }
        problems.forEach(p -> timeline.say("demo", "PROBLEM: %s", p));
        return false;
    }

    /** The changes: new flags, flips, a removal, and a flag removed and made again at once. */
    private void change(ZkClient admin) throws Exception {
        Random random = new Random(42);
        String[] names = {"dark-mode", "new-checkout", "beta-search", "fast-path"};
        for (int i = 0; i < CHANGES; i++) {
            String flag = FLAGS + "/" + names[random.nextInt(names.length)];
            String value = random.nextBoolean() ? "on" : "off";
            if (admin.zooKeeper().exists(flag, false) == null) {
                Znodes.create(admin, flag, value, CreateMode.PERSISTENT);
                timeline.say("writer", "add %s = %s", flag, value);
            } else if (i % 7 == 6) {
                admin.zooKeeper().delete(flag, -1);
                timeline.say("writer", "remove %s", flag);
            } else if (i % 5 == 4) {
                admin.zooKeeper().delete(flag, -1);
                Znodes.create(admin, flag, value, CreateMode.PERSISTENT);
                timeline.say("writer", "remove and make again %s = %s (a new czxid)", flag, value);
            } else {
                admin.zooKeeper().setData(flag, value.getBytes(StandardCharsets.UTF_8), -1);
                timeline.say("writer", "set %s = %s", flag, value);
            }
            Thread.sleep(100);
        }
    }

    private void awaitAgreement(ZkClient admin, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AGREE_SECONDS);
        String truth = "";
        while (System.nanoTime() < deadline) {
            truth = flags(admin);
            String expected = truth;
            if (readers.keySet().stream().allMatch(r -> expected.equals(lastState.get(r)))) {
                timeline.say("demo", "%s: %s", what, truth.isEmpty() ? "(none)" : truth);
                return;
            }
            Thread.sleep(50);
        }
        problems.add(what + ": not within " + AGREE_SECONDS + " s; ensemble " + truth + ", readers "
                + readers.keySet().stream().map(r -> r + " " + lastState.get(r)).collect(Collectors.joining(", ")));
    }

    /** @return the flags as the ensemble holds them, in the readers' format */
    private static String flags(ZkClient admin) throws Exception {
        Map<String, String> flags = new TreeMap<>();
        for (String name : admin.zooKeeper().getChildren(FLAGS, false)) {
            byte[] data = admin.zooKeeper().getData(FLAGS + "/" + name, false, null);
            flags.put(name, new String(data, StandardCharsets.UTF_8));
        }
        return flags.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(";"));
    }

    private void start(String name) throws IOException {
        List<String> args = List.of("--connect", connectString, "--name", name, "--t0", Long.toString(timeline.t0()));
        Process p = new ProcessBuilder(Jvm.command(Jvm.LIGHT, FlagsReader.class.getName(), args))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        readers.put(name, p);
        Thread relay = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith(FlagsReader.STATE)) {
                        lastState.put(name, line.substring(FlagsReader.STATE.length()));
                    } else {
                        timeline.line(line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                synchronized (problems) {
                    problems.add("lost the output of " + name + ": " + e);
                }
            }
        }, "relay-" + name);
        relay.setDaemon(true);
        relay.start();
        relays.add(relay);
    }

    private void stopReaders() throws InterruptedException {
        for (Process p : readers.values()) {
            p.toHandle().destroy(); // SIGTERM: it closes its cache and client
        }
        for (Map.Entry<String, Process> r : readers.entrySet()) {
            if (!r.getValue().waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                problems.add(r.getKey() + " did not stop within " + STOP_SECONDS + " s");
                r.getValue().toHandle().destroyForcibly();
            }
        }
        for (Thread relay : relays) {
            relay.join(TimeUnit.SECONDS.toMillis(5));
        }
    }
}
