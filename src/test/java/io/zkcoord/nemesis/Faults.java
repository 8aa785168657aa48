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
        /**
         * SIGSTOP of the process whose node holds a random workload's lock, SIGCONT only once that node is gone
         * (its session expired) and someone else has written the workload's register since (or after {@link
         * #HANDOFF_LIMIT}): a GC pause that always outlasts the hold and its handoff, however slow the machine.
         * Recorded as {@code pause-client}: for the checker it is one. Not among the random run's kinds: it is
         * for the checker's own test, whose broken {@code unfenced} workload must then write over its successor.
         */
        PAUSE_HOLDER_PAST_HANDOFF("pause-client"),
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

        /** The kinds the randomized runs draw from: every one but the checker's own test's. */
        static List<Kind> randomized() {
            return java.util.Arrays.stream(values()).filter(k -> k != PAUSE_HOLDER_PAST_HANDOFF).toList();
        }
    }

    private final Ensemble ensemble;
    private final List<ClientProcess> clients;
    private final History.Writer log;
    private final Random random;
    private final long sessionMillis;
    /** The longest a {@link Kind#PAUSE_HOLDER_PAST_HANDOFF} waits for the handoff before it resumes the holder. */
    static final java.time.Duration HANDOFF_LIMIT = java.time.Duration.ofSeconds(90);

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
        volatile ScheduledFuture<?> timer;
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
            }
            try {
                undo.run();
                log.record("", "end", kind.label, target, 0, 0, detail);
            } finally {
                synchronized (Faults.this) {
                    active.remove(this); // only now: activeCount() counts a fault until it is undone
                }
            }
        }
    }

    /** Starts one fault of {@code kind}; @return false if no target was free */
    boolean inject(Kind kind) throws Exception {
        return switch (kind) {
            case PAUSE_CLIENT -> pauseClient();
            case PAUSE_HOLDER_PAST_HANDOFF -> pauseHolderPastHandoff();
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

    /** @return the faults started and not yet undone (an ending fault counts until its undo has run) */
    synchronized int activeCount() {
        return active.size();
    }

    /**
     * Waits until every {@link Kind#PAUSE_HOLDER_PAST_HANDOFF} has ended by its own rule (each within {@link
     * #HANDOFF_LIMIT}): the run's final heal must not cut short the handoff such a pause waits for.
     */
    void awaitHandoffs() throws InterruptedException {
        io.zkcoord.testing.Await.within(HANDOFF_LIMIT.plusSeconds(10), java.time.Duration.ofMillis(100), () -> {
            synchronized (this) {
                return active.stream().noneMatch(a -> a.kind == Kind.PAUSE_HOLDER_PAST_HANDOFF);
            }
        });
    }

    private Active begin(Kind kind, String target, String detail, long millis, Runnable undo) {
        Active a = new Active(kind, target, detail, undo);
        synchronized (this) {
            active.add(a);
        }
        log.record("", "start", kind.label, target, 0, 0, detail);
        if (millis > 0) {
            a.timer = timer.schedule(a::end, millis, TimeUnit.MILLISECONDS);
        }
        return a;
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

    /** See {@link Kind#PAUSE_HOLDER_PAST_HANDOFF}. */
    private boolean pauseHolderPastHandoff() {
        Optional<Holding> found = holding();
        if (found.isEmpty() || !claimClient(found.get().client())) {
            return false;
        }
        Holding h = found.get();
        ClientProcess c = h.client();
        long pid = c.pid();
        Signals.stop(pid);
        // The look-up and the signal take time: the process is paused as the holder only if its node is still
        // first now (stopped, it can no longer release it).
        if (!firstNode(h.dir()).equals(Optional.of(h.node()))) {
            Signals.resume(pid);
            releaseClient(c);
            return false;
        }
        String register = h.dir().substring(0, h.dir().lastIndexOf('/')) + "/register";
        Active a = begin(Kind.PAUSE_HOLDER_PAST_HANDOFF, c.name(), "pid=" + pid + " until=handoff of " + h.dir(), 0,
                () -> {
                    Signals.resume(pid);
                    releaseClient(c);
                });
        new HandoffWatch(a, h.dir() + "/" + h.node(), register, System.nanoTime() + HANDOFF_LIMIT.toNanos()).next();
        return true;
    }

    /**
     * Ends a {@link Kind#PAUSE_HOLDER_PAST_HANDOFF} once the paused holder's node is gone and the register was
     * written since (by another process: the paused one sends nothing, and its last request was answered long
     * before its session expired), or no register exists; looks every 100 ms on the fault timer.
     */
    private final class HandoffWatch {
        private final Active pause;
        private final String node;
        private final String register;
        private final long deadline;
        /** The register's mzxid when the node was first seen gone; -1 before. */
        private long goneAt = -1;

        HandoffWatch(Active pause, String node, String register, long deadline) {
            this.pause = pause;
            this.node = node;
            this.register = register;
            this.deadline = deadline;
        }

        void next() {
            try {
                pause.timer = timer.schedule(this::look, 100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // endAll() ended it
            }
        }

        private void look() {
            synchronized (Faults.this) {
                if (pause.ended) {
                    return;
                }
            }
            if (handedOn()) {
                pause.end();
            } else if (System.nanoTime() - deadline > 0) {
                log.record("", "error", "pause-past-handoff", pause.target, 0, 0, "no handoff of " + node + " within "
                        + HANDOFF_LIMIT.toSeconds() + " s: resumed");
                pause.end();
            } else {
                next();
            }
        }

        private boolean handedOn() {
            try {
                if (stat(node).isPresent()) {
                    return false;
                }
                Optional<org.apache.zookeeper.data.Stat> written = stat(register);
                if (written.isEmpty()) {
                    return true;
                }
                if (goneAt < 0) {
                    goneAt = written.get().getMzxid();
                    return false;
                }
                return written.get().getMzxid() > goneAt;
            } catch (Exception e) {
                return false; // look again
            }
        }
    }

    /** @return the node's stat, empty if it does not exist; throws if the observer gets no answer within a second */
    private Optional<org.apache.zookeeper.data.Stat> stat(String path) throws Exception {
        CompletableFuture<Optional<org.apache.zookeeper.data.Stat>> answer = new CompletableFuture<>();
        observer.exists(path, false, (rc, p, ctx, stat) -> {
            if (rc == org.apache.zookeeper.KeeperException.Code.OK.intValue()) {
                answer.complete(Optional.of(stat));
            } else if (rc == org.apache.zookeeper.KeeperException.Code.NONODE.intValue()) {
                answer.complete(Optional.empty());
            } else {
                answer.completeExceptionally(org.apache.zookeeper.KeeperException.create(
                        org.apache.zookeeper.KeeperException.Code.get(rc), p));
            }
        }, null);
        return answer.get(1, TimeUnit.SECONDS);
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
        return holding().map(Holding::client);
    }

    /** A workload's first node (in {@code dir}) and the client process that owns it. */
    private record Holding(String dir, String node, ClientProcess client) {
    }

    /** The first node of a random workload's queue and its owner, if a client process of the run owns it. */
    private Optional<Holding> holding() {
        if (holdDirs.isEmpty()) {
            return Optional.empty();
        }
        String dir = holdDirs.get(random.nextInt(holdDirs.size()));
        try {
            Optional<String> first = firstNode(dir);
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
                    return Optional.of(new Holding(dir, first.get(), c));
                }
            }
        } catch (Exception e) {
            // the ensemble is busy with other faults: any client will do
        }
        return Optional.empty();
    }

    /** @return the first node of {@code dir} by sequence number, empty if none (or no answer within a second) */
    private Optional<String> firstNode(String dir) {
        try {
            CompletableFuture<List<String>> children = new CompletableFuture<>();
            observer.getChildren(dir, false, (rc, path, ctx, names) -> {
                if (names == null) {
                    children.complete(List.of());
                } else {
                    children.complete(names);
                }
            }, null);
            return children.get(1, TimeUnit.SECONDS).stream()
                    .min(Comparator.comparing(n -> n.substring(Math.max(0, n.length() - 10))));
        } catch (Exception e) {
            return Optional.empty();
        }
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
