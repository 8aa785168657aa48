package io.zkcoord.nemesis;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * A lock per entity: {@value #KEYS} keys {@code order-0} ... , each with its own fenced register ({@code
 * register-0}, ...). Every cycle takes a new {@link ZkMutex} on one key of the three in use now: the keys in use
 * move on every {@value #WINDOW_MILLIS} ms (the same in every process, so processes meet on them), so each key is
 * used a few times, by several processes, and then left: its directory is made by a first use and removed by a
 * last release, again and again, through the faults. The checker sees each key's holds, and its register fenced
 * by the holds' tokens across the directory's lifetimes.
 */
final class EntityWorkload extends Workload {

    /** The keys, used three at a time. */
    static final int KEYS = 48;
    /** How long three keys are in use before the next three. */
    static final long WINDOW_MILLIS = 1_500;
    private static final Duration ACQUIRE_WAIT = Duration.ofSeconds(5);

    EntityWorkload(String name, Settings settings) {
        super(name, settings);
    }

    /** @return the key names, {@code order-<i>} */
    static List<String> keys() {
        return IntStream.range(0, KEYS).mapToObj(i -> "order-" + i).toList();
    }

    @Override
    void cycle() throws InterruptedException {
        long window = System.currentTimeMillis() / WINDOW_MILLIS;
        int key = (int) ((window * 3 + random.nextInt(3)) % KEYS);
        String path = dir + "/order-" + key;
        long session = sessionOf(client);
        history.record(name, "invoke", "acquire", path, 0, session, "exclusive");
        Optional<ZkLease> granted;
        try {
            granted = new ZkMutex(client, path).tryAcquire(ACQUIRE_WAIT);
        } catch (CoordinationException | IllegalStateException e) {
            history.record(name, "fail", "acquire", path, 0, session, e.getClass().getSimpleName());
            pace(100, 300);
            return;
        }
        if (granted.isEmpty()) {
            history.record(name, "fail", "acquire", path, 0, session, "timeout");
            return;
        }
        ZkLease lease = granted.get();
        long token = lease.fencingToken();
        long s = sessionOf(client);
        history.record(name, "ok", "acquire", path, token, s, "exclusive");
        lease.whenLost().thenRun(() -> history.record(name, "event", "lost", path, token, s, ""));
        try {
            pace(5, 30);
            Register.increment(dataClient.zooKeeper(), history, name, dir + "/register-" + key, token, s,
                    Register.Guard.FENCED, lease);
            pace(5, 30);
        } finally {
            history.record(name, "invoke", "release", path, token, s, "exclusive");
            lease.release();
            history.record(name, "ok", "release", path, token, s, "exclusive");
        }
        pace(0, 50);
    }
}
