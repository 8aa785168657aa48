package io.zkcoord.cli;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.semaphore.ZkSemaphore;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code zkcoord run}: a distributed {@code flock(1)}. Acquires the lock, runs the command with
 * {@code ZKCOORD_FENCING_TOKEN}, {@code ZKCOORD_LOCK_PATH} and {@code ZKCOORD_LOCK_NODE} in its
 * environment and zkcoord's standard input, output and error, releases when it exits, and exits
 * with its status.
 *
 * <p>The lock counts as lost when the client reports {@code LOST} (the session expired, or the
 * client presumed so after a session timeout without any server), when the lease reports its loss,
 * or when the connection stays {@code SUSPENDED} for longer than the grace. The command is then
 * sent SIGTERM ({@link Process#destroy()}); if it still runs after the grace, it and every process
 * it started get SIGKILL ({@link Process#destroyForcibly()}, and its process group through the
 * {@link Watchdog}); zkcoord exits 76.
 *
 * <p>Signals to zkcoord (SIGTERM, SIGINT, SIGHUP) run a shutdown hook: while the command runs, it
 * is stopped as above and the lock released before the JVM exits; before it runs, the client is
 * closed, so the queue node goes at once. Against the signals no hook sees (SIGKILL, a crash), the
 * command runs in a process group of its own that a {@link Watchdog} outside the JVM kills when
 * zkcoord dies.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Runs COMMAND while holding a distributed lock, like flock(1) across machines.",
            "%nThe command gets ZKCOORD_FENCING_TOKEN (the hold's fencing token, decimal), ZKCOORD_LOCK_PATH and "
                + "ZKCOORD_LOCK_NODE in its environment, and zkcoord's stdin, stdout and stderr. The lock is released "
                + "when it exits, and zkcoord exits with its status.",
            "%nIf the lock is lost while it runs (the session expired, or the connection was suspended for longer "
                + "than --grace), the command gets SIGTERM, then SIGKILL (it and its child processes) if it still "
                + "runs after --grace, and zkcoord exits 76.%n"
        })
final class RunCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @ArgGroup(exclusive = true, multiplicity = "1", heading = "What to hold (one of):%n")
    Target target;

    @Option(names = "--wait", paramLabel = "DURATION", converter = Durations.Converter.class,
            description = "Give up if not acquired within DURATION (e.g. 0, 30s, 5m): exit 75, the command is not "
                    + "started. Default: wait as long as it takes.")
    Duration maxWait;

    @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "10s", converter = Durations.Converter.class,
            description = "How long a suspended connection may last before the lock counts as lost, and how long "
                    + "the command has between SIGTERM and SIGKILL (default: ${DEFAULT-VALUE}).")
    Duration grace;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments (after --).")
    List<String> command;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Exactly one of the lock kinds. */
    static final class Target {
        @Option(names = "--lock", paramLabel = "PATH", description = "An exclusive lock (ZkMutex).")
        String lock;

        @Option(names = "--read", paramLabel = "PATH", description = "The read side of a read/write lock: shared.")
        String read;

        @Option(names = "--write", paramLabel = "PATH", description = "The write side of a read/write lock: exclusive.")
        String write;

        @ArgGroup(exclusive = false)
        Semaphore semaphore;

        String path() {
            return lock != null ? lock : read != null ? read : write != null ? write : semaphore.path;
        }

        /** @return the option that gave {@link #path()}, for messages */
        String option() {
            return lock != null ? "--lock" : read != null ? "--read" : write != null ? "--write" : "--semaphore";
        }
    }

    /** A semaphore needs its permit count. */
    static final class Semaphore {
        @Option(names = "--semaphore", required = true, paramLabel = "PATH",
                description = "One of the N permits of a semaphore (ZkSemaphore).")
        String path;

        @Option(names = "--permits", required = true, paramLabel = "N",
                description = "The semaphore's permit count; every user of PATH must give the same N.")
        int permits;
    }

    private PrintWriter err;
    /**
     * Counted down once the lock is released and the client closed: the shutdown hook (zkcoord got
     * SIGTERM or SIGINT) waits for it, or the JVM would halt before the release and the lock would
     * stay held until the session timed out.
     */
    private final CountDownLatch finished = new CountDownLatch(1);
    /** Why the lock was lost when its session ended (expired, or presumed so), whoever noticed first. */
    private static final String SESSION_ENDED = "the ZooKeeper session of the lock ended";
    /** How long a shutdown waits for the release after the command stopped. */
    private static final long RELEASE_ON_SHUTDOWN_SECONDS = 5;

    /** Guards {@link #stopping}, {@link #running} and {@link #watchdog} between the main thread and the hook. */
    private final Object state = new Object();
    /** Set by the shutdown hook: no command may start after it. */
    private boolean stopping;
    /** The command, once started. */
    private Process running;
    private Watchdog watchdog;

    @Override
    public Integer call() throws Exception {
        err = spec.commandLine().getErr();
        connection.require();
        if (target.semaphore != null && target.semaphore.permits < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--permits must be at least 1, was " + target.semaphore.permits);
        }
        String path = PathArgument.check(target.option(), target.path());
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "zkcoord-grace");
            t.setDaemon(true);
            return t;
        });
        ZkClient client = connection.open();
        Thread hook = new Thread(() -> shutDown(client), "zkcoord-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try (client) {
            Optional<ZkLease> acquired;
            try {
                acquired = acquire(client);
            } catch (RuntimeException e) {
                if (isStopping()) {
                    return ExitStatus.OK; // the hook closed the client; the JVM exits with the signal's status
                }
                if (e instanceof IllegalStateException) {
                    // A semaphore whose directory records another permit count.
                    say(e.getMessage());
                    return ExitStatus.USAGE;
                }
                throw e;
            }
            if (acquired.isEmpty()) {
                say(describe() + " not acquired within " + Durations.format(maxWait) + "; " + command.get(0)
                        + " not started");
                return ExitStatus.NOT_ACQUIRED;
            }
            try (ZkLease lease = acquired.get()) {
                CompletableFuture<String> lost = new CompletableFuture<>();
                watchForLoss(client, lease, lost, timer);
                return runHolding(lease, path, lost);
            }
        } finally {
            timer.shutdownNow();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running
            }
        }
    }

    /**
     * The shutdown hook (zkcoord got SIGTERM, SIGINT or SIGHUP). While the command runs: it gets
     * SIGTERM (SIGKILL after the grace), and the hook waits for the main thread's release. Before
     * it runs (connecting, or waiting in the queue): the client is closed, which ends the session
     * and so deletes the queue node at once, instead of leaving it to block the waiters behind until
     * the session times out.
     */
    private void shutDown(ZkClient client) {
        Process process;
        Watchdog dog;
        synchronized (state) {
            stopping = true;
            process = running;
            dog = watchdog;
        }
        if (process != null) {
            stop(process, dog, "zkcoord was asked to stop");
        } else {
            client.close();
        }
        try {
            finished.await(RELEASE_ON_SHUTDOWN_SECONDS, TimeUnit.SECONDS); // the release, then halt
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean isStopping() {
        synchronized (state) {
            return stopping;
        }
    }

    private Optional<ZkLease> acquire(ZkClient client) throws InterruptedException {
        if (target.semaphore != null) {
            ZkSemaphore s = new ZkSemaphore(client, target.semaphore.path, target.semaphore.permits);
            return maxWait == null ? Optional.of(s.acquire()) : s.tryAcquire(maxWait);
        }
        io.zkcoord.lock.ZkLock lock = target.lock != null ? new ZkMutex(client, target.lock)
                : target.read != null ? new ZkReadWriteLock(client, target.read).readLock()
                : new ZkReadWriteLock(client, target.write).writeLock();
        return maxWait == null ? Optional.of(lock.acquire()) : lock.tryAcquire(maxWait);
    }

    /**
     * Completes {@code lost} (with the reason) on LOST, CLOSED, the lease's own loss, or a SUSPENDED
     * that is not followed by RECONNECTED within the grace.
     */
    private void watchForLoss(ZkClient client, ZkLease lease, CompletableFuture<String> lost,
            ScheduledExecutorService timer) {
        ConnectionListener listener = new ConnectionListener() {
            private ScheduledFuture<?> suspended;

            @Override
            public synchronized void stateChanged(ConnectionState state) {
                switch (state) {
                    case SUSPENDED -> {
                        if (suspended == null) {
                            suspended = timer.schedule(() -> lost.complete("the connection to ZooKeeper was suspended "
                                    + "for longer than the grace (" + Durations.format(grace) + ")"),
                                    grace.toNanos(), TimeUnit.NANOSECONDS);
                        }
                    }
                    case CONNECTED, RECONNECTED -> {
                        if (suspended != null) {
                            suspended.cancel(false);
                            suspended = null;
                        }
                    }
                    case LOST -> lost.complete(SESSION_ENDED);
                    case CLOSED -> lost.complete("the ZooKeeper client closed");
                }
            }
        };
        client.addConnectionListener(listener);
        if (client.state() == ConnectionState.SUSPENDED) {
            listener.stateChanged(ConnectionState.SUSPENDED);
        }
        lease.whenLost().thenRun(() -> lost.complete(SESSION_ENDED));
        if (!lease.isValid()) {
            lost.complete("the lock was lost before the command started");
        }
    }

    /** Runs the command under {@code lease}; returns zkcoord's exit status. */
    private int runHolding(ZkLease lease, String path, CompletableFuture<String> lost) throws InterruptedException {
        if (lost.isDone()) {
            say(describe() + " lost before " + command.get(0) + " started: " + lost.join());
            return ExitStatus.LOCK_LOST;
        }
        Optional<String> unrunnable = Executables.problem(command.get(0));
        if (unrunnable.isPresent()) {
            say("cannot run " + command.get(0) + ": " + unrunnable.get());
            return unrunnable.get().equals(Executables.NOT_FOUND) ? ExitStatus.NOT_FOUND : ExitStatus.CANNOT_EXECUTE;
        }
        try (Watchdog dog = Watchdog.start()) {
            ProcessBuilder pb = new ProcessBuilder(dog.wrap(command)).inheritIO();
            pb.environment().put("ZKCOORD_FENCING_TOKEN", Long.toString(lease.fencingToken()));
            pb.environment().put("ZKCOORD_LOCK_PATH", path);
            pb.environment().put("ZKCOORD_LOCK_NODE", lease.nodePath());
            Process process;
            synchronized (state) {
                if (stopping) {
                    return ExitStatus.OK; // a signal came first; the JVM exits with its status
                }
                try {
                    process = pb.start();
                } catch (IOException e) {
                    say("cannot run " + command.get(0) + ": " + (e.getCause() != null ? e.getCause().getMessage()
                            : e.getMessage()));
                    return ExitStatus.CANNOT_EXECUTE;
                }
                running = process;
                watchdog = dog;
            }
            return supervise(process, dog, lost);
        } catch (IOException e) {
            say("cannot start the watchdog that stops " + command.get(0) + " if zkcoord dies (" + e.getMessage()
                    + "); " + command.get(0) + " not started");
            return ExitStatus.CANNOT_EXECUTE;
        }
    }

    /** Waits for the command's end or the lock's loss; returns zkcoord's exit status. */
    private int supervise(Process process, Watchdog dog, CompletableFuture<String> lost) {
        CompletableFuture.anyOf(process.onExit(), lost).join();
        if (lost.isDone()) {
            if (process.isAlive()) {
                stop(process, dog, describe() + " lost: " + lost.join());
            } else {
                say(describe() + " lost: " + lost.join() + "; " + command.get(0) + " had already exited with "
                        + process.exitValue());
            }
            return ExitStatus.LOCK_LOST;
        }
        return process.exitValue();
    }

    /**
     * SIGTERM to the command; after the grace, SIGKILL to it and every process it started (its
     * descendants, and everything left in its process group).
     */
    private void stop(Process process, Watchdog watchdog, String why) {
        if (!process.isAlive()) {
            return;
        }
        say(why + "; sending SIGTERM to " + command.get(0) + " (pid " + process.pid() + ")");
        List<ProcessHandle> descendants = process.descendants().toList();
        process.destroy();
        try {
            if (process.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
                killLeftovers(descendants, watchdog);
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        say(command.get(0) + " (pid " + process.pid() + ") still running " + Durations.format(grace)
                + " after SIGTERM; sending SIGKILL");
        descendants = process.descendants().toList();
        process.destroyForcibly();
        killLeftovers(descendants, watchdog);
        process.onExit().join();
    }

    /** SIGKILL to processes the command started that are still alive: nothing runs on after the lock. */
    private static void killLeftovers(List<ProcessHandle> descendants, Watchdog watchdog) {
        descendants.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        watchdog.killGroup();
    }

    private String describe() {
        if (target.lock != null) {
            return "lock " + target.lock;
        }
        if (target.read != null) {
            return "read lock " + target.read;
        }
        if (target.write != null) {
            return "write lock " + target.write;
        }
        return "semaphore " + target.semaphore.path + " (" + target.semaphore.permits + " permits)";
    }

    private void say(String message) {
        err.println("zkcoord: " + message);
        err.flush();
    }
}
