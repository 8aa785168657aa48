package io.zkcoord.nemesis;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * One workload thread of a client process: its own {@link ZkClient} (its own session), a loop of operations
 * recorded in the history until {@link #stop()}. Connection states go to the history as {@code event conn}.
 */
abstract class Workload implements Runnable {

    /** Every workload name a client process understands, and what it runs. */
    static final List<String> NAMES = List.of("mutex", "rwlock", "semaphore", "guarded", "election", "multi",
            "shards", "entity", "counter", "unlocked", "unfenced");

    /** Permits of the semaphore workload. */
    static final int PERMITS = 2;

    /** The data client's session: longer than any pause or partition of a run. */
    static final Duration DATA_SESSION = Duration.ofSeconds(30);

    final String name;
    final String dir;
    final ZkClient client;
    /**
     * The client the register is written through: its own long session, as a resource reached over its own
     * connection, so a holder resumed after its lock session expired still reaches the register, and only the
     * token compare (or the guarded commit, which runs on the lock's session whatever) stops a stale write.
     */
    final ZkClient dataClient;
    final History.Writer history;
    final Random random;
    private volatile boolean stopping;

    Workload(String name, Settings settings) {
        this.name = name;
        this.dir = settings.base() + "/" + name;
        this.history = settings.history();
        this.random = new Random(settings.seed() ^ name.hashCode());
        this.client = client(settings.connectString(), settings.session());
        this.dataClient = client(settings.connectString(), DATA_SESSION);
        client.addConnectionListener(state -> history.record(name, "event", "conn", dir, 0, sessionOf(client),
                state.name()));
    }

    /** What every workload of a process shares. */
    record Settings(String process, String connectString, Duration session, String base, History.Writer history, long seed) {
    }

    static Workload of(String name, Settings settings) {
        return switch (name) {
            case "election" -> new ElectionWorkload(name, settings);
            case "mutex", "rwlock", "semaphore", "guarded", "unlocked", "unfenced" -> new LockWorkload(name, settings);
            case "multi" -> new MultiLockWorkload(name, settings);
            case "shards" -> new ShardWorkload(name, settings);
            case "entity" -> new EntityWorkload(name, settings);
            case "counter" -> new CounterWorkload(name, settings);
            default -> throw new IllegalArgumentException("unknown workload " + name + "; known: " + NAMES);
        };
    }

    static ZkClient client(String connectString, Duration session) {
        return ZkClient.builder()
                .connectString(connectString)
                .sessionTimeout(session)
                .connectionTimeout(Duration.ofSeconds(60))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(10), Duration.ofMillis(100)))
                .build();
    }

    static long sessionOf(ZkClient client) {
        try {
            return client.sessionId();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** One operation (or one hold) of the loop. */
    abstract void cycle() throws InterruptedException;

    /** Releases whatever the workload still holds; called once after the loop. */
    void finish() {
    }

    void stop() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    @Override
    public void run() {
        try {
            while (!stopping) {
                try {
                    cycle();
                } catch (CoordinationException | IllegalStateException e) {
                    history.record(name, "event", "error", dir, 0, sessionOf(client), e.getClass().getSimpleName());
                    pace(100, 300);
                }
            }
            finish();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            client.close();
            dataClient.close();
            history.record(name, "event", "closed", dir, 0, 0, "");
        }
    }

    /** Waits a random {@code [min, max)} ms: the workload's own pace (think time), not a wait for a condition. */
    void pace(int minMillis, int maxMillis) throws InterruptedException {
        Thread.sleep(minMillis + random.nextInt(Math.max(1, maxMillis - minMillis)));
    }
}
