package io.zkcoord.examples;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.CreateMode;

/**
 * Kills the ZooKeeper leader while clients are locking, working and unlocking {@link ZkMutex}
 * {@code /demo/locks/failover}. Each client (its own {@link ZkClient}, so its own session) prints
 * {@code SUSPENDED} when its connection drops and {@code RECONNECTED} when it is back, and says
 * whether it still holds the lock. A session outlives a short outage, and with it the holds: the
 * holder keeps its lock through the election and finishes its work; waiters keep their place.
 *
 * <p>Sequence: clients run a few rounds; the demo finds the leader with the four-letter {@code
 * srvr} and kills its process ({@code kill -9}); the ensemble elects a new leader among the two
 * others; every client reconnects and runs a few more rounds; the demo restarts the killed server
 * and waits until it serves again.
 *
 * <p>With {@code --connect} the demo does not own the servers: it names the leader and asks you to
 * stop it (in the {@link LocalEnsemble} console: {@code kill N}), and waits up to a minute.
 *
 * <p>Checks: no two holders at once, fencing tokens increase from each holder to the next, every
 * client finishes. Exits with status 1 otherwise.
 *
 * <pre>
 * usage: FailoverDemo [--connect host:port,...] [--clients N]
 * </pre>
 */
public final class FailoverDemo {

    static final String LOCK = "/demo/locks/failover";

    private static final long WORK_MILLIS = 250;
    private static final int ROUNDS_BEFORE_KILL = 4;
    private static final int ROUNDS_AFTER_RECONNECT = 2;
    private static final long WAIT_SECONDS = 60;

    private final Timeline timeline;
    private final String connectString;
    private final int clientCount;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicLong lastToken = new AtomicLong();
    private final AtomicInteger rounds = new AtomicInteger();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<Worker> workers = new ArrayList<>();
    private volatile boolean stop;

    private FailoverDemo(Timeline timeline, String connectString, int clientCount) {
        this.timeline = timeline;
        this.connectString = connectString;
        this.clientCount = clientCount;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect", "--clients"), Set.of(),
                "usage: FailoverDemo [--connect host:port,...] [--clients N]");
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            FailoverDemo demo = new FailoverDemo(timeline, ensemble.connectString(),
                    Integer.parseInt(options.value("--clients").orElse("3")));
            status = demo.run(ensemble) ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    private boolean run(DemoEnsemble ensemble) throws Exception {
        timeline.line("");
        timeline.line("Failover demo: " + clientCount + " clients lock, work " + WORK_MILLIS + " ms and unlock ZkMutex " + LOCK
                + " in a loop; the ZooKeeper leader is killed mid-run.");
        timeline.line("");
        try (ZkClient admin = DemoEnsemble.client(connectString)) {
            Znodes.deleteTree(admin, "/demo");
            Znodes.create(admin, "/demo", "", CreateMode.PERSISTENT);
        }
        ExecutorService threads = Executors.newCachedThreadPool();
        OptionalInt killed = OptionalInt.empty();
        boolean finished = false;
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int i = 1; i <= clientCount; i++) {
                Worker w = new Worker("client-" + i);
                workers.add(w);
                timeline.row(w.name);
            }
            for (Worker w : workers) {
                running.add(threads.submit(w));
            }
            awaitCondition("the first rounds", () -> rounds.get() >= ROUNDS_BEFORE_KILL);
            awaitCondition("a holder", () -> workers.stream().anyMatch(w -> w.heldToken != 0));

            Optional<LocalEnsemble> local = ensemble.local();
            if (local.isPresent()) {
                killed = killLeader(local.get());
            } else {
                String leader = LocalEnsemble.leaderOf(connectString).orElse("(unknown: srvr not answered)");
                timeline.say("demo", "STOP THE LEADER NOW: %s (in the LocalEnsemble console: kill N). Waiting %d s.",
                        leader, WAIT_SECONDS);
            }

            awaitCondition("every client to reconnect and work again", () -> workers.stream()
                    .allMatch(w -> w.reconnects.get() > 0 && w.roundsSinceReconnect.get() >= ROUNDS_AFTER_RECONNECT));
            timeline.say("demo", "every client reconnected and locked again; stopping the clients");
            finished = true;
        } catch (IllegalStateException e) {
            timeline.say("demo", "%s", e.getMessage());
        } finally {
            stop = true;
            threads.shutdown();
            if (!threads.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)) {
                violations.add("clients did not stop");
                threads.shutdownNow();
            }
            for (Worker w : workers) {
                w.client.close();
            }
        }
        for (Worker w : workers) {
            if (w.failure != null) {
                violations.add(w.name + " failed: " + w.failure);
            }
        }

        timeline.printChart("Who held " + LOCK + " ('#'); the long bar is the hold that lived through the election:");
        timeline.line("");
        for (Worker w : workers) {
            timeline.line(String.format("  %-9s %2d rounds, %d SUSPENDED, %d RECONNECTED, session %s, holds lost: %d",
                    w.name, w.rounds.get(), w.suspensions.get(), w.reconnects.get(),
                    w.sessionKept() ? "kept (0x" + Long.toHexString(w.firstSession) + ")" : "REPLACED", w.holdsLost.get()));
        }
        for (Worker w : workers) {
            if (w.keptThroughOutage.get() != 0) {
                timeline.line(String.format("  %s held the lock (token %d) from before the outage until after it.",
                        w.name, w.keptThroughOutage.get()));
            }
        }
        if (killed.isPresent()) {
            timeline.say("demo", "restarting server %d", killed.getAsInt());
            ensemble.local().orElseThrow().restart(killed.getAsInt());
            timeline.say("ensemble", "%s", ensemble.local().orElseThrow().describe());
        }
        timeline.line("");
        if (!finished) {
            violations.add("the run did not complete");
        }
        if (violations.isEmpty()) {
            timeline.line("OK: the leader died mid-run; clients were SUSPENDED, RECONNECTED"
                    + (workers.stream().allMatch(Worker::sessionKept) ? " to their own sessions, kept their holds" : "")
                    + " and finished; never two holders at once, fencing tokens always increased.");
            return true;
        }
        timeline.line("WRONG: " + String.join("; ", violations));
        return false;
    }

    private OptionalInt killLeader(LocalEnsemble ensemble) throws InterruptedException {
        OptionalInt leader = ensemble.leader();
        if (leader.isEmpty()) {
            throw new IllegalStateException("no server says it leads: " + ensemble.describe());
        }
        int id = leader.getAsInt();
        String holder = workers.stream().filter(w -> w.heldToken != 0).map(w -> w.name).findFirst().orElse("nobody");
        timeline.say("demo", "KILLING THE LEADER: server %d (port %d, pid %d) while %s holds the lock", id,
                ensemble.clientPort(id), ensemble.pid(id).orElse(-1), holder);
        ensemble.kill(id);
        return leader;
    }

    private void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting for " + what + " after " + WAIT_SECONDS + " s");
            }
            for (Worker w : workers) {
                if (w.failure != null) {
                    throw new IllegalStateException(w.name + " failed: " + w.failure);
                }
            }
            Thread.sleep(20);
        }
    }

    /** One client: its own session, a lock/work/unlock loop, and what it saw. */
    private final class Worker implements Runnable {
        final String name;
        final ZkClient client;
        final ZkMutex mutex;
        final long firstSession;
        final AtomicInteger rounds = new AtomicInteger();
        final AtomicInteger suspensions = new AtomicInteger();
        final AtomicInteger reconnects = new AtomicInteger();
        final AtomicInteger roundsSinceReconnect = new AtomicInteger();
        final AtomicInteger holdsLost = new AtomicInteger();
        /** The token of a hold that was in progress across a SUSPENDED / RECONNECTED, 0 if none. */
        final AtomicLong keptThroughOutage = new AtomicLong();
        /** The token of the hold in progress, 0 when none. */
        volatile long heldToken;
        volatile Throwable failure;

        Worker(String name) {
            this.name = name;
            this.client = DemoEnsemble.client(connectString);
            this.firstSession = client.sessionId();
            this.session = firstSession;
            this.mutex = new ZkMutex(client, LOCK);
            timeline.say(name, "connected, session 0x%x", firstSession);
            client.addConnectionListener(this::stateChanged);
            mutex.addLossListener((lock, token) -> {
                holdsLost.incrementAndGet();
                timeline.say(name, "LOST its hold (token %d) with its session", token);
            });
        }

        /** The session after the latest reconnection. */
        volatile long session;

        boolean sessionKept() {
            return session == firstSession;
        }

        private void stateChanged(ConnectionState state) {
            long token = heldToken;
            String holding = token != 0 ? String.format(", while HOLDING the lock (token %d)", token) : "";
            switch (state) {
                case SUSPENDED -> {
                    suspensions.incrementAndGet();
                    timeline.say(name, "SUSPENDED: connection lost; the session may still be alive%s", holding);
                }
                case RECONNECTED -> {
                    session = client.sessionId();
                    String which = session == firstSession ? "its own session" : "a NEW session";
                    roundsSinceReconnect.set(0);
                    reconnects.incrementAndGet();
                    if (token != 0 && session == firstSession) {
                        keptThroughOutage.compareAndSet(0, token);
                    }
                    timeline.say(name, "RECONNECTED to %s 0x%x%s", which, session,
                            token != 0 ? String.format("; still HOLDS the lock (token %d)", token) : "");
                }
                case LOST -> timeline.say(name, "LOST its session: its holds are gone");
                default -> { }
            }
        }

        @Override
        public void run() {
            try {
                while (!stop) {
                    mutex.lock();
                    long from = timeline.now();
                    long token = mutex.fencingToken();
                    try {
                        enter(token);
                        heldToken = token;
                        timeline.say(name, "holds the lock, token %d", token);
                        Thread.sleep(WORK_MILLIS);
                        inside.decrementAndGet();
                    } finally {
                        long releasing = System.nanoTime();
                        mutex.unlock();
                        heldToken = 0;
                        // until the delete is through, the node (the hold) still exists
                        timeline.held(name, from, timeline.now());
                        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasing);
                        if (took > 200) {
                            timeline.say(name, "released the lock; the delete took %d ms (waited for the ensemble)", took);
                        }
                    }
                    rounds.incrementAndGet();
                    roundsSinceReconnect.incrementAndGet();
                    FailoverDemo.this.rounds.incrementAndGet();
                }
            } catch (Throwable t) {
                failure = t;
                timeline.say(name, "FAILED: %s", t);
            }
        }

        /** The guarded resource's own checks: one holder at a time, tokens only grow. */
        private void enter(long token) {
            if (inside.incrementAndGet() != 1) {
                violations.add(name + " held the lock while another client did");
            }
            long previous = lastToken.getAndSet(token);
            if (token <= previous) {
                violations.add(String.format("%s's token %d is not above the previous %d", name, token, previous));
            }
        }
    }
}
