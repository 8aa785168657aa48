package io.zkcoord.nemesis;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkMultiLock;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Multi-lock: three lock paths {@code lock-a}, {@code lock-b}, {@code lock-c}, each guarding its own fenced
 * register ({@code register-a}, ...). Two cycles in three take a {@link ZkMultiLock} over two or three of them (in
 * a random order), the third a {@link ZkMutex} on one: the checker sees each path's holds, multi and single
 * alike, and the multi's one token fencing every register it writes. {@code ok acquire} lists every path held,
 * comma-separated.
 */
final class MultiLockWorkload extends Workload {

    static final List<String> KEYS = List.of("a", "b", "c");
    private static final Duration ACQUIRE_WAIT = Duration.ofSeconds(5);

    MultiLockWorkload(String name, Settings settings) {
        super(name, settings);
    }

    @Override
    void cycle() throws InterruptedException {
        List<String> keys = new ArrayList<>(KEYS);
        Collections.shuffle(keys, random);
        int n = random.nextInt(3) == 0 ? 1 : 2 + random.nextInt(2);
        keys = keys.subList(0, n);
        List<String> paths = keys.stream().map(k -> dir + "/lock-" + k).toList();
        ZkLock lock = n == 1 ? new ZkMutex(client, paths.get(0)) : new ZkMultiLock(client, paths);
        String joined = String.join(",", paths);
        long session = sessionOf(client);
        history.record(name, "invoke", "acquire", joined, 0, session, "exclusive");
        Optional<ZkLease> granted;
        try {
            granted = lock.tryAcquire(ACQUIRE_WAIT);
        } catch (CoordinationException | IllegalStateException e) {
            history.record(name, "fail", "acquire", joined, 0, session, e.getClass().getSimpleName());
            pace(100, 300);
            return;
        }
        if (granted.isEmpty()) {
            history.record(name, "fail", "acquire", joined, 0, session, "timeout");
            return;
        }
        ZkLease lease = granted.get();
        long token = lease.fencingToken();
        long s = sessionOf(client);
        history.record(name, "ok", "acquire", joined, token, s, "exclusive");
        lease.whenLost().thenRun(() -> history.record(name, "event", "lost", joined, token, s, ""));
        try {
            for (String k : keys) {
                pace(5, 40);
                Register.increment(dataClient.zooKeeper(), history, name, dir + "/register-" + k, token, s,
                        Register.Guard.FENCED, lease);
            }
            pace(10, 60);
        } finally {
            history.record(name, "invoke", "release", joined, token, s, "exclusive");
            lease.release();
            history.record(name, "ok", "release", joined, token, s, "exclusive");
        }
        pace(0, 50);
    }
}
