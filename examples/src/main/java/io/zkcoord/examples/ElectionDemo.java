package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.election.Participant;
import io.zkcoord.election.ZkLeaderElection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;

/**
 * Leader election with a crash: 3 worker processes ({@link ElectionWorker}, each its own JVM and
 * session) join {@link ZkLeaderElection} {@code /demo/election}; exactly one leads and prints its
 * epoch once a second. After a few seconds the demo kills the leader's process with {@code kill -9}:
 * no {@code close()}, no shutdown hook. Its node stays until the ensemble expires its session; then
 * the next worker in line is elected, with a higher epoch, and starts printing. The demo stops
 * everything.
 *
 * <p>Checks, from the workers' own {@code elected} / {@code revoked} events stamped on one time
 * axis: never two leaders at once (the killed worker led until it died), a different worker took
 * over with an epoch higher than the dead leader's, and no worker died unasked. Exits with status 1
 * otherwise.
 *
 * <pre>
 * usage: ElectionDemo [--connect host:port,...] [--workers N] [--session-ms MS]
 * </pre>
 */
public final class ElectionDemo {

    static final String ELECTION = "/demo/election";

    private static final String USAGE = "usage: ElectionDemo [--connect host:port,...] [--workers N] [--session-ms MS]\n"
            + "  without --connect it starts a local 3-server ensemble and stops it at the end";
    /** How long the first leader leads before it is killed. */
    private static final long LEAD_MILLIS = 3_500;
    /** How long the new leader is watched before the demo stops everything. */
    private static final long AFTER_TAKEOVER_MILLIS = 1_500;
    private static final long WAIT_SECONDS = 30;
    private static final long STOP_SECONDS = 10;

    private final Timeline timeline;
    private final String connectString;
    private final int workerCount;
    private final long sessionMillis;
    private final Map<String, Worker> workers = new LinkedHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    /** Every leadership, in the order the events arrived; guarded by this. */
    private final List<Leadership> leaderships = new ArrayList<>();
    private volatile boolean stopping;

    /** One leadership of one worker: from its {@code elected} to its {@code revoked} or its death. */
    private static final class Leadership {
        final String who;
        final long epoch;
        final long from;
        long to = -1; // -1 while it lasts
        String end = "";

        Leadership(String who, long epoch, long from) {
            this.who = who;
            this.epoch = epoch;
            this.from = from;
        }

        boolean open() {
            return to < 0;
        }

        @Override
        public String toString() {
            return String.format("%s epoch %d %.3fs..%s", who, epoch, from / 1000.0,
                    open() ? "" : String.format("%.3fs %s", to / 1000.0, end));
        }
    }

    /** One worker process. */
    private static final class Worker {
        final String name;
        final Process process;
        Thread relay;

        Worker(String name, Process process) {
            this.name = name;
            this.process = process;
        }
    }

    private ElectionDemo(Timeline timeline, String connectString, int workerCount, long sessionMillis) {
        this.timeline = timeline;
        this.connectString = connectString;
        this.workerCount = workerCount;
        this.sessionMillis = sessionMillis;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect", "--workers", "--session-ms"), Set.of(), USAGE);
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            ElectionDemo demo = new ElectionDemo(timeline, ensemble.connectString(),
                    Integer.parseInt(options.value("--workers").orElse("3")),
                    Long.parseLong(options.value("--session-ms").orElse("4000")));
            status = demo.run() ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    /** @return true if the outcome is the expected one */
    private boolean run() throws Exception {
        if (workerCount < 2) {
            throw new IllegalArgumentException("--workers must be at least 2, was " + workerCount);
        }
        timeline.line("");
        timeline.line(String.format("Election demo: %d workers in %d separate JVMs join ZkLeaderElection %s; the"
                + " leader's process is killed with kill -9 and another worker takes over.", workerCount, workerCount,
                ELECTION));
        timeline.line("");
        Leadership killed = null;
        Leadership successor = null;
        long killedAt = -1;
        try (ZkClient admin = DemoEnsemble.client(connectString)) {
            Znodes.deleteTree(admin, "/demo");
            Znodes.create(admin, "/demo", "", CreateMode.PERSISTENT);
            // Never started: it only reads the queue (participants() needs no membership).
            ZkLeaderElection observer = new ZkLeaderElection(admin, ELECTION, "demo-observer");
            try {
                for (int i = 1; i <= workerCount; i++) {
                    String name = "worker-" + i;
                    timeline.row(name);
                    Worker w = new Worker(name, startWorker(name));
                    workers.put(name, w);
                    w.relay = relay(w);
                }
                awaitCondition("every worker to join and one to lead",
                        () -> participants(observer).size() == workerCount && openLeaderships().size() == 1);
                timeline.say("demo", "queue in ZooKeeper: %s", describe(participants(observer)));

                sleepWatching(LEAD_MILLIS);
                List<Leadership> leading = openLeaderships();
                if (leading.size() != 1) {
                    throw new IllegalStateException("expected one leader before the kill, saw " + leading);
                }
                killed = leading.get(0);
                Worker victim = workers.get(killed.who);
                timeline.say("demo", "KILLING the leader %s (pid %d) with kill -9: no close(), no shutdown hook; its"
                        + " node goes when its session (%d ms) expires", killed.who, victim.process.pid(), sessionMillis);
                // Through the process handle: Process.destroyForcibly() would also close our end of its
                // stdout, racing with the relay thread that reads it.
                victim.process.toHandle().destroyForcibly();
                if (!victim.process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(killed.who + " did not die");
                }
                killedAt = timeline.now();
                died(killed, killedAt);
                timeline.say("demo", "%s is dead (exit status %d); waiting for another worker to lead", killed.who,
                        victim.process.exitValue());

                Leadership dead = killed;
                awaitCondition("another worker to lead", () -> firstLeadershipAfter(dead) != null);
                successor = firstLeadershipAfter(dead);
                timeline.say("demo", "%s TOOK OVER %d ms after the kill, epoch %d (the dead leader's was %d)",
                        successor.who, successor.from - killedAt, successor.epoch, killed.epoch);
                awaitCondition("the dead leader's node to go", () -> participants(observer).size() == workerCount - 1);
                timeline.say("demo", "queue in ZooKeeper: %s", describe(participants(observer)));
                sleepWatching(AFTER_TAKEOVER_MILLIS);
            } catch (IllegalStateException e) {
                violations.add(e.getMessage());
                timeline.say("demo", "%s", e.getMessage());
            } finally {
                stopWorkers();
            }
        }
        return report(killed, successor, killedAt);
    }

    private Process startWorker(String name) throws IOException {
        List<String> args = List.of("--connect", connectString, "--name", name, "--t0", Long.toString(timeline.t0()),
                "--session-ms", Long.toString(sessionMillis));
        return new ProcessBuilder(Jvm.command(Jvm.LIGHT, ElectionWorker.class.getName(), args))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    /** Copies a worker's timeline lines to ours and takes in its leadership events. */
    private Thread relay(Worker w) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(w.process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith(ElectionWorker.EVENT)) {
                        event(w.name, line.substring(ElectionWorker.EVENT.length()).split(" "));
                    } else {
                        timeline.line(line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                violations.add("lost the output of " + w.name + ": " + e);
            }
        }, "relay-" + w.name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** {@code elected <ms> <epoch>} or {@code revoked <ms> <epoch> <reason>}, from worker {@code who}. */
    private synchronized void event(String who, String[] words) {
        long at = Long.parseLong(words[1]);
        long epoch = Long.parseLong(words[2]);
        Leadership mine = open(who);
        if (words[0].equals("elected")) {
            if (mine != null) {
                violations.add(who + " elected again while leading: " + mine);
                return;
            }
            leaderships.add(new Leadership(who, epoch, at));
        } else {
            if (mine == null || mine.epoch != epoch) {
                violations.add(String.format("%s revoked (epoch %d) without leading with that epoch", who, epoch));
                return;
            }
            mine.to = at;
            mine.end = "revoked " + words[3];
            timeline.held(who, mine.from, at);
        }
        notifyAll();
    }

    /** A dead process leads nothing: its leadership ends when it died. */
    private synchronized void died(Leadership l, long at) {
        if (l.open()) {
            l.to = at;
            l.end = "killed";
            timeline.held(l.who, l.from, at);
        }
    }

    private synchronized Leadership open(String who) {
        for (Leadership l : leaderships) {
            if (l.who.equals(who) && l.open()) {
                return l;
            }
        }
        return null;
    }

    private synchronized List<Leadership> openLeaderships() {
        return leaderships.stream().filter(Leadership::open).toList();
    }

    private synchronized Leadership firstLeadershipAfter(Leadership dead) {
        return leaderships.stream().filter(l -> !l.who.equals(dead.who) && l.from >= dead.from && l != dead)
                .findFirst().orElse(null);
    }

    private static List<Participant> participants(ZkLeaderElection observer) {
        try {
            return observer.participants();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private static String describe(List<Participant> queue) {
        return queue.stream().map(p -> p.leader() ? String.format("%s (LEADER, epoch %d)", p.id(), p.epoch()) : p.id())
                .collect(Collectors.joining(", "));
    }

    /** Stops every worker still running: followers first, so that no hand-over happens, then the leader. */
    private void stopWorkers() throws InterruptedException {
        stopping = true;
        List<String> leading = openLeaderships().stream().map(l -> l.who).toList();
        List<Worker> order = new ArrayList<>();
        workers.values().stream().filter(w -> !leading.contains(w.name)).forEach(order::add);
        workers.values().stream().filter(w -> leading.contains(w.name)).forEach(order::add);
        for (Worker w : order) {
            if (!w.process.isAlive()) {
                continue;
            }
            timeline.say("demo", "stopping %s (SIGTERM: it closes its election)", w.name);
            w.process.toHandle().destroy(); // SIGTERM, and its last lines still reach the relay
            if (!w.process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                violations.add(w.name + " did not stop within " + STOP_SECONDS + " s");
                w.process.toHandle().destroyForcibly();
                w.process.waitFor(STOP_SECONDS, TimeUnit.SECONDS);
            }
        }
        for (Worker w : workers.values()) {
            if (w.relay != null) {
                w.relay.join(TimeUnit.SECONDS.toMillis(5));
            }
        }
        synchronized (this) {
            long now = timeline.now();
            for (Leadership l : leaderships) {
                if (l.open()) {
                    violations.add(l.who + " was still leading after it stopped: " + l);
                    l.to = now;
                    timeline.held(l.who, l.from, now);
                }
            }
        }
    }

    private boolean report(Leadership killed, Leadership successor, long killedAt) {
        timeline.printChart("Who led " + ELECTION + " ('#'), one row per worker process:");
        timeline.line("");
        List<Leadership> all;
        synchronized (this) {
            all = List.copyOf(leaderships);
        }
        for (Leadership l : all) {
            timeline.line("  " + l);
        }
        // Never two leaders at once: the leaderships of different workers do not overlap in time.
        for (int i = 0; i < all.size(); i++) {
            for (int j = i + 1; j < all.size(); j++) {
                Leadership a = all.get(i);
                Leadership b = all.get(j);
                if (!a.who.equals(b.who) && a.from < b.to && b.from < a.to) {
                    violations.add("two leaders at once: " + a + " and " + b);
                }
            }
        }
        if (killed == null || successor == null) {
            violations.add("no hand-over was seen");
        } else if (successor.epoch <= killed.epoch) {
            violations.add(String.format("%s's epoch %d is not above the dead leader's %d", successor.who,
                    successor.epoch, killed.epoch));
        }
        timeline.line("");
        if (violations.isEmpty()) {
            timeline.line(String.format("OK: one leader at a time; %s was killed with kill -9 and %s took over %d ms"
                    + " later (session timeout %d ms) with a higher epoch, %d > %d.", killed.who, successor.who,
                    successor.from - killedAt, sessionMillis, successor.epoch, killed.epoch));
            return true;
        }
        timeline.line("WRONG: " + String.join("; ", violations));
        return false;
    }

    /** Sleeps, checking that no worker died unasked. */
    private void sleepWatching(long millis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < end) {
            checkWorkers();
            Thread.sleep(50);
        }
    }

    private void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting for " + what + " after " + WAIT_SECONDS + " s");
            }
            checkWorkers();
            Thread.sleep(20);
        }
    }

    /** A worker that exits before the demo stops it failed. */
    private void checkWorkers() {
        if (stopping) {
            return;
        }
        synchronized (this) {
            for (Worker w : workers.values()) {
                boolean wasKilled = leaderships.stream().anyMatch(l -> l.who.equals(w.name) && "killed".equals(l.end));
                if (!w.process.isAlive() && !wasKilled) {
                    throw new IllegalStateException(w.name + " exited by itself, status " + w.process.exitValue());
                }
            }
        }
    }
}
