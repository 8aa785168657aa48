package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.CreateMode;

/**
 * Shards across live processes: 3 worker processes ({@link ShardWorker}, each its own JVM and
 * session) share 12 shards of {@code /demo/shards} through {@link io.zkcoord.shard.ZkShardMember}
 * and print what they own. The demo kills one with {@code kill -9}; its shards move to the other
 * two once its session expires. Then a new worker joins and takes its share.
 *
 * <p>Checks, from the workers' own {@code assigned} / {@code revoked} events on one time axis: no
 * shard ever had two owners at once (a killed worker owned its shards until it died), each shard's
 * tokens grew from owner to owner, {@code assigned} and {@code revoked} alternated per worker and
 * shard, every shard was owned and the workers balanced (4/4/4, then 6/6, then 4/4/4) at each rest,
 * and the join moved at most 4 shards. Exits with status 1 otherwise.
 *
 * <pre>
 * usage: ShardDemo [--connect host:port,...] [--session-ms MS]
 * </pre>
 */
public final class ShardDemo {

    static final String PATH = "/demo/shards";
    private static final int SHARDS = 12;
    private static final String USAGE = "usage: ShardDemo [--connect host:port,...] [--session-ms MS]\n"
            + "  without --connect it starts a local 3-server ensemble and stops it at the end";
    private static final long WAIT_SECONDS = 60;
    private static final long STOP_SECONDS = 15;

    private final Timeline timeline;
    private final String connectString;
    private final long sessionMillis;
    private final Map<String, Process> workers = new LinkedHashMap<>();
    private final List<Thread> relays = new ArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    /** One ownership of one shard by one worker: from assigned to revoked (or the worker's death). Guarded by this. */
    private static final class Ownership {
        final String who;
        final int shard;
        final long token;
        final long from;
        long to = -1;

        Ownership(String who, int shard, long token, long from) {
            this.who = who;
            this.shard = shard;
            this.token = token;
            this.from = from;
        }

        @Override
        public String toString() {
            return who + " shard " + shard + " token " + token + " " + from + ".." + (to < 0 ? "" : to) + " ms";
        }
    }

    private final List<Ownership> ownerships = new ArrayList<>();

    private ShardDemo(Timeline timeline, String connectString, long sessionMillis) {
        this.timeline = timeline;
        this.connectString = connectString;
        this.sessionMillis = sessionMillis;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect", "--session-ms"), Set.of(), USAGE);
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            ShardDemo demo = new ShardDemo(timeline, ensemble.connectString(),
                    Long.parseLong(options.value("--session-ms").orElse("4000")));
            status = demo.run() ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    private boolean run() throws Exception {
        timeline.line("");
        timeline.line("Shard demo: 3 workers in separate JVMs share " + SHARDS + " shards of " + PATH
                + "; one is killed with kill -9, its shards move; a new worker joins and takes its share.");
        timeline.line("");
        try (ZkClient admin = DemoEnsemble.client(connectString)) {
            Znodes.deleteTree(admin, "/demo");
            Znodes.create(admin, "/demo", "", CreateMode.PERSISTENT);
            try {
                for (int i = 1; i <= 3; i++) {
                    start("worker-" + i);
                }
                awaitRest("3 workers own 4 shards each", Map.of("worker-1", 4, "worker-2", 4, "worker-3", 4));
                String victim = "worker-2";
                Process p = workers.get(victim);
                timeline.say("demo", "KILLING %s (pid %d) with kill -9: its shards move when its session (%d ms) expires",
                        victim, p.pid(), sessionMillis);
                p.toHandle().destroyForcibly();
                if (!p.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(victim + " did not die");
                }
                long killedAt = timeline.now();
                died(victim, killedAt);
                awaitRest("the 2 survivors own 6 shards each", Map.of("worker-1", 6, "worker-3", 6));
                timeline.say("demo", "the dead worker's shards were owned again %d ms after the kill", lastAssigned() - killedAt);
                Map<Integer, String> beforeJoin = owners();
                start("worker-4");
                awaitRest("worker-4 joined: 4 shards each", Map.of("worker-1", 4, "worker-3", 4, "worker-4", 4));
                Map<Integer, String> afterJoin = owners();
                int moved = 0;
                for (int s = 0; s < SHARDS; s++) {
                    if (!afterJoin.get(s).equals(beforeJoin.get(s))) {
                        moved++;
                    }
                }
                timeline.say("demo", "the join moved %d shards (at most ceil(12/3) = 4)", moved);
                if (moved > 4) {
                    violations.add("the join moved " + moved + " shards, more than 4");
                }
            } catch (IllegalStateException e) {
                violations.add(e.getMessage());
            } finally {
                stopWorkers();
            }
        }
        return report();
    }

    private void start(String name) throws IOException {
        List<String> args = List.of("--connect", connectString, "--name", name, "--t0", Long.toString(timeline.t0()),
                "--shards", Integer.toString(SHARDS), "--session-ms", Long.toString(sessionMillis));
        Process p = new ProcessBuilder(Jvm.command(Jvm.LIGHT, ShardWorker.class.getName(), args))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.put(name, p);
        Thread relay = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith(ShardWorker.EVENT)) {
                        event(name, line.substring(ShardWorker.EVENT.length()).split(" "));
                    } else {
                        timeline.line(line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                violations.add("lost the output of " + name + ": " + e);
            }
        }, "relay-" + name);
        relay.setDaemon(true);
        relay.start();
        relays.add(relay);
    }

    /** {@code assigned <ms> <shard> <token>} or {@code revoked <ms> <shard> <token> <reason>}. */
    private synchronized void event(String who, String[] words) {
        long at = Long.parseLong(words[1]);
        int shard = Integer.parseInt(words[2]);
        long token = Long.parseLong(words[3]);
        Ownership open = open(who, shard);
        if (words[0].equals("assigned")) {
            if (open != null) {
                violations.add(who + " assigned shard " + shard + " twice in a row");
                return;
            }
            ownerships.add(new Ownership(who, shard, token, at));
        } else {
            if (open == null || open.token != token) {
                violations.add(who + " revoked shard " + shard + " (" + words[4] + ") without owning it with token " + token);
                return;
            }
            open.to = at;
        }
        notifyAll();
    }

    private synchronized void died(String who, long at) {
        for (Ownership o : ownerships) {
            if (o.who.equals(who) && o.to < 0) {
                o.to = at;
            }
        }
    }

    private synchronized Ownership open(String who, int shard) {
        for (Ownership o : ownerships) {
            if (o.who.equals(who) && o.shard == shard && o.to < 0) {
                return o;
            }
        }
        return null;
    }

    private synchronized Map<Integer, String> owners() {
        Map<Integer, String> owners = new TreeMap<>();
        for (Ownership o : ownerships) {
            if (o.to < 0) {
                owners.put(o.shard, o.who);
            }
        }
        return owners;
    }

    private synchronized long lastAssigned() {
        return ownerships.stream().mapToLong(o -> o.from).max().orElse(0);
    }

    private synchronized Map<String, Integer> counts() {
        Map<String, Integer> counts = new TreeMap<>();
        for (Ownership o : ownerships) {
            if (o.to < 0) {
                counts.merge(o.who, 1, Integer::sum);
            }
        }
        return counts;
    }

    /** Waits until the open ownerships are exactly {@code expected} per worker, covering every shard. */
    private void awaitRest(String what, Map<String, Integer> expected) throws InterruptedException {
        awaitCondition(what, () -> counts().equals(new TreeMap<>(expected)) && owners().size() == SHARDS);
        timeline.say("demo", "at rest: %s; owners %s", what, owners());
    }

    private void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting for " + what + " after " + WAIT_SECONDS + " s; owners "
                        + owners());
            }
            synchronized (this) {
                wait(50);
            }
        }
    }

    private void stopWorkers() throws InterruptedException {
        for (Map.Entry<String, Process> w : workers.entrySet()) {
            if (w.getValue().isAlive()) {
                w.getValue().toHandle().destroy(); // SIGTERM: it closes its member
            }
        }
        for (Map.Entry<String, Process> w : workers.entrySet()) {
            if (!w.getValue().waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                violations.add(w.getKey() + " did not stop within " + STOP_SECONDS + " s");
                w.getValue().toHandle().destroyForcibly();
            }
        }
        for (Thread relay : relays) {
            relay.join(TimeUnit.SECONDS.toMillis(5));
        }
    }

    private boolean report() {
        List<Ownership> all;
        synchronized (this) {
            all = List.copyOf(ownerships);
        }
        Map<Integer, List<Ownership>> byShard = new HashMap<>();
        for (Ownership o : all) {
            byShard.computeIfAbsent(o.shard, k -> new ArrayList<>()).add(o);
        }
        for (List<Ownership> list : byShard.values()) {
            for (int i = 0; i < list.size(); i++) {
                for (int j = i + 1; j < list.size(); j++) {
                    Ownership a = list.get(i);
                    Ownership b = list.get(j);
                    long aTo = a.to < 0 ? Long.MAX_VALUE : a.to;
                    long bTo = b.to < 0 ? Long.MAX_VALUE : b.to;
                    if (!a.who.equals(b.who) && a.from < bTo && b.from < aTo) {
                        violations.add("two owners at once: " + a + " and " + b);
                    }
                    Ownership earlier = a.from <= b.from ? a : b;
                    Ownership later = earlier == a ? b : a;
                    if (!earlier.who.equals(later.who) && later.token <= earlier.token) {
                        violations.add("token did not grow: " + earlier + " then " + later);
                    }
                }
            }
        }
        timeline.line("");
        if (violations.isEmpty()) {
            timeline.line("OK: " + all.size() + " ownerships of " + SHARDS + " shards by 4 workers, never two owners of a"
                    + " shard at once, tokens growing from owner to owner, balanced at every rest.");
            return true;
        }
        timeline.line("WRONG: " + String.join("; ", violations));
        return false;
    }
}
