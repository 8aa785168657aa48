package io.zkcoord.shedlock;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A child process for the tests: takes one lock and then waits to be killed, printing {@code
 * LOCKED <token>} once it holds the lock, or {@code HELD} if it was not granted.
 * Arguments: connect string, root path, lock name, lockAtMostFor in ms.
 */
public final class HolderProcess {

    private HolderProcess() {
    }

    public static void main(String[] args) throws Exception {
        ZkClient client = ZkClient.builder().connectString(args[0]).sessionTimeout(Duration.ofSeconds(4)).build();
        ZkcoordLockProvider provider = new ZkcoordLockProvider(client, args[1]);
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), args[2],
                Duration.ofMillis(Long.parseLong(args[3])), Duration.ZERO));
        System.out.println(lock.map(l -> "LOCKED " + ((ZkcoordSimpleLock) l).fencingToken()).orElse("HELD"));
        System.out.flush();
        Thread.currentThread().join(); // holds until the test kills this process
    }
}
