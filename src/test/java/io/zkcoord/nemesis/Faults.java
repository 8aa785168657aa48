package io.zkcoord.nemesis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooKeeper;

/**
 * The faults, each started at once and ended by itself after its duration (a scheduled task); {@link #endAll()}
 * ends the ones still active. Every start and end goes to the nemesis history ({@code start}/{@code end}, the kind,
 * the target). Targets already under a fault are not picked again, and at most a minority of the servers is down or
 * paused at once (partitions can still cut a quorum off). Thread-safe.
 */
final class Faults {

    /** The kinds of fault. */
    enum Kind {
        /** SIGSTOP of a client process (the holder of a random workload, or any), SIGCONT later: a GC pause. */
        PAUSE_CLIENT("pause-client"),
        /** SIGKILL of a client process; a new incarnation starts in its slot a moment later. */
        KILL_CLIENT("kill-client"),
        /** Every connection of one client process silenced (its proxies stalled), then healed. */
        PARTITION_CLIENT("partition-client"),
        /** Every connection of one client process closed at once (it reconnects): instant. */
        CUT_CLIENT("cut-client"),
        /** SIGKILL of a server (the leader or any), restarted on its data later. */
        KILL_SERVER("kill-server"),
        /** SIGSTOP of a server (the leader or any), SIGCONT later. */
        PAUSE_SERVER("pause-server"),
        /** Server-to-server links cut: one server isolated, the leader isolated, a random split, or a bridge. */
        PARTITION("partition");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    private final Ensemble ensemble;
    private final List<ClientProcess> clients;
    private final History.Writer log;
    private final Random random;
    private final long sessionMillis;
    private final ZooKeeper observer;
    private final List<String> holdDirs;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nemesis-fault-timer");
        t.setDaemon(true);
        return t;
    });
    private final Set<Integer> busyServers = new HashSet<>();   // guarded by this
    private final Set<Integer> busyClients = new HashSet<>();   // guarded by this
    private final List<Active> active = new ArrayList<>();      // guarded by this

    Faults(Ensemble ensemble, List<ClientProcess> clients, History.Writer log, Random random, long sessionMillis,
            ZooKeeper observer, List<String> holdDirs) {
        this.ensemble = ensemble;
        this.clients = clients;
        this.log = log;
        this.random = random;
        this.sessionMillis = sessionMillis;
        this.observer = observer;
        this.holdDirs = holdDirs;
    }

    /** A fault in progress. */
    private final class Active {
        final Kind kind;
        final String target;
        final String detail;
        final Runnable undo;
        ScheduledFuture<?> timer;
        boolean ended;

        Active(Kind kind, String target, String detail, Runnable undo) {
            this.kind = kind;
            this.target = target;
            this.detail = detail;
            this.undo = undo;
        }

        void end() {
            synchronized (Faults.this) {
                if (ended) {
                    return;
                }
                ended = true;
                active.remove(this);
            }
            undo.run();
            log.record("", "end", kind.label, target, 0, 0, detail);
        }
    }

    /** Starts one fault of {@code kind}; @return false if no target was free */
    boolean inject(Kind kind) throws Exception {
        return switch (kind) {
            case PAUSE_CLIENT -> pauseClient();
            case KILL_CLIENT -> killClient();
            case PARTITION_CLIENT -> partitionClient();
            case CUT_CLIENT -> cutClient();
            case KILL_SERVER -> killServer();
            case PAUSE_SERVER -> pauseServer();
            case PARTITION -> partition();
        };
    }

    /** Ends every active fault now. */
    void endAll() {
        List<Active> now;
        synchronized (this) {
            now = new ArrayList<>(active);
        }
        for (Active a : now) {
            if (a.timer != null) {
                a.timer.cancel(false);
            }
            a.end();
        }
        timer.shutdownNow();
    }

    synchronized int activeCount() {
        return active.size();
    }

    private void begin(Kind kind, String target, String detail, long millis, Runnable undo) {
        Active a = new Active(kind, target, detail, undo);
        synchronized (this) {
            active.add(a);
        }
        log.record("", "start", kind.label, target, 0, 0, detail);
        if (millis > 0) {
            a.timer = timer.schedule(a::end, millis, TimeUnit.MILLISECONDS);
        }
    }

    private long between(double lowSessions, double highSessions) {
        return (long) (sessionMillis * (lowSessions + random.nextDouble() * (highSessions - lowSessions)));
    }

    // ---- client faults

    private boolean pauseClient() {
        Optional<ClientProcess> target = random.nextInt(3) > 0 ? holder().or(this::anyClient) : anyClient();
        if (target.isEmpty() || !claimClient(target.get())) {
            return false;
        }
        ClientProcess c = target.get();
        long pid = c.pid();
        // mostly longer than the session (the GC-pause case), sometimes shorter (the session survives)
        long millis = random.nextInt(4) > 0 ? between(1.3, 2.5) : between(0.2, 0.6);
        Signals.stop(pid);
        begin(Kind.PAUSE_CLIENT, c.name(), "pid=" + pid + " ms=" + millis, millis, () -> {
            Signals.resume(pid);
            releaseClient(c);
        });
        return true;
    }

    private boolean killClient() throws Exception {
        Optional<ClientProcess> target = anyClient();
        if (target.isEmpty() || !claimClient(target.get())) {
            return false;
        }
        ClientProcess c = target.get();
        String name = c.name();
        long millis = 300 + random.nextInt(1500);
        // recorded before the kill: nothing the process does after this line is a hold it acts on
        begin(Kind.KILL_CLIENT, name, "pid=" + c.pid() + " restart-ms=" + millis, millis, () -> {
            try {
                c.start(log);
            } catch (Exception e) {
                log.record("", "error", "restart-client", name, 0, 0, e.toString());
            }
            releaseClient(c);
        });
        c.kill();
        return true;
    }

    private boolean partitionClient() {
        Optional<ClientProcess> target = anyClient();
        if (target.isEmpty() || !claimClient(target.get())) {
            return false;
        }
        ClientProcess c = target.get();
        long millis = random.nextBoolean() ? between(1.2, 2.5) : between(0.2, 0.6);
        c.stall();
        begin(Kind.PARTITION_CLIENT, c.name(), "ms=" + millis, millis, () -> {
            c.heal();
            releaseClient(c);
        });
        return true;
    }

    private boolean cutClient() {
        Optional<ClientProcess> target = anyClient();
        if (target.isEmpty()) {
            return false;
        }
        ClientProcess c = target.get();
        log.record("", "start", Kind.CUT_CLIENT.label, c.name(), 0, 0, "");
        c.cutConnections();
        log.record("", "end", Kind.CUT_CLIENT.label, c.name(), 0, 0, "");
        return true;
    }

    private synchronized boolean claimClient(ClientProcess c) {
        // leave at least one client slot untouched, so some workload can always move
        if (busyClients.contains(c.slot) || busyClients.size() + 1 >= clients.size()) {
            return false;
        }
        busyClients.add(c.slot);
        return true;
    }

    private synchronized void releaseClient(ClientProcess c) {
        busyClients.remove(c.slot);
    }

    private Optional<ClientProcess> anyClient() {
        return Optional.of(clients.get(random.nextInt(clients.size())));
    }

    /** The client process whose node is first in a random workload's queue (the holder, or the leader). */
    private Optional<ClientProcess> holder() {
        if (holdDirs.isEmpty()) {
            return Optional.empty();
        }
        String dir = holdDirs.get(random.nextInt(holdDirs.size()));
        try {
            CompletableFuture<List<String>> children = new CompletableFuture<>();
            observer.getChildren(dir, false, (rc, path, ctx, names) -> {
                if (names == null) {
                    children.complete(List.of());
                } else {
                    children.complete(names);
                }
            }, null);
            List<String> names = children.get(1, TimeUnit.SECONDS);
            Optional<String> first = names.stream()
                    .min(Comparator.comparing(n -> n.substring(Math.max(0, n.length() - 10))));
            if (first.isEmpty()) {
                return Optional.empty();
            }
            CompletableFuture<byte[]> data = new CompletableFuture<>();
            observer.getData(dir + "/" + first.get(), false, (rc, path, ctx, bytes, stat) -> data.complete(bytes),
                    null);
            byte[] bytes = data.get(1, TimeUnit.SECONDS);
            String text = bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8);
            for (ClientProcess c : clients) {
                if (text.contains("pid=" + c.pid() + " ") || text.startsWith(c.name() + "/")) {
                    return Optional.of(c);
                }
            }
        } catch (Exception e) {
            // the ensemble is busy with other faults: any client will do
        }
        return Optional.empty();
    }

    // ---- server faults

    private boolean killServer() throws Exception {
        OptionalInt id = pickServer();
        if (id.isEmpty()) {
            return false;
        }
        ServerProcess s = ensemble.server(id.getAsInt());
        long millis = 1000 + random.nextInt(4000);
        begin(Kind.KILL_SERVER, s.toString(), "pid=" + s.pid() + " restart-ms=" + millis, millis, () -> {
            try {
                s.start();
            } catch (Exception e) {
                log.record("", "error", "restart-server", s.toString(), 0, 0, e.toString());
            }
            releaseServer(s.id);
        });
        s.kill();
        return true;
    }

    private boolean pauseServer() {
        OptionalInt id = pickServer();
        if (id.isEmpty()) {
            return false;
        }
        ServerProcess s = ensemble.server(id.getAsInt());
        long pid = s.pid();
        long millis = 500 + random.nextInt(5000);
        Signals.stop(pid);
        begin(Kind.PAUSE_SERVER, s.toString(), "pid=" + pid + " ms=" + millis, millis, () -> {
            Signals.resume(pid);
            releaseServer(s.id);
        });
        return true;
    }

    /** The leader half the time, else any running server; none if a minority is already down or paused. */
    private OptionalInt pickServer() {
        int candidate = -1;
        if (random.nextBoolean()) {
            OptionalInt leader = ensemble.leader();
            if (leader.isPresent()) {
                candidate = leader.getAsInt();
            }
        }
        if (candidate < 0) {
            candidate = 1 + random.nextInt(ensemble.size());
        }
        synchronized (this) {
            if (busyServers.contains(candidate) || busyServers.size() + 1 > (ensemble.size() - 1) / 2) {
                return OptionalInt.empty();
            }
            busyServers.add(candidate);
        }
        return OptionalInt.of(candidate);
    }

    private synchronized void releaseServer(int id) {
        busyServers.remove(id);
    }

    private boolean partition() {
        int n = ensemble.size();
        List<int[]> pairs = new ArrayList<>();
        String shape;
        int choice = random.nextInt(4);
        if (choice == 0 || choice == 1) {
            int isolated = choice == 1 && ensemble.leader().isPresent() ? ensemble.leader().getAsInt()
                    : 1 + random.nextInt(n);
            shape = (choice == 1 ? "leader " : "") + "s" + isolated + " isolated";
            for (int other = 1; other <= n; other++) {
                if (other != isolated) {
                    pairs.add(new int[] {isolated, other});
                }
            }
        } else if (choice == 2) {
            // a random minority against the rest
            List<Integer> ids = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                ids.add(i);
            }
            java.util.Collections.shuffle(ids, random);
            List<Integer> minority = ids.subList(0, (n - 1) / 2);
            List<Integer> majority = ids.subList((n - 1) / 2, n);
            shape = "split " + minority + "|" + majority;
            for (int a : minority) {
                for (int b : majority) {
                    pairs.add(new int[] {a, b});
                }
            }
        } else {
            // a bridge: two sides that see one server in the middle, not each other
            List<Integer> ids = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                ids.add(i);
            }
            java.util.Collections.shuffle(ids, random);
            int bridge = ids.get(0);
            List<Integer> left = ids.subList(1, 1 + (n - 1) / 2);
            List<Integer> right = ids.subList(1 + (n - 1) / 2, n);
            shape = "bridge s" + bridge + " between " + left + "|" + right;
            for (int a : left) {
                for (int b : right) {
                    pairs.add(new int[] {a, b});
                }
            }
        }
        long millis = 1500 + random.nextInt(6000);
        Links links = ensemble.links();
        for (int[] p : pairs) {
            links.cut(p[0], p[1]);
        }
        begin(Kind.PARTITION, shape, "ms=" + millis, millis, () -> {
            for (int[] p : pairs) {
                links.heal(p[0], p[1]);
            }
        });
        return true;
    }
}
