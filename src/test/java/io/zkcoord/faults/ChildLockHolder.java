package io.zkcoord.faults;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;

/**
 * The client JVM of scenario 5, run by {@link CrashedClientFaultTest} as a child {@code java} process:
 * connects, takes the lock, prints {@code HELD <fencing token>} on stdout (the only line it ever prints
 * there; logs go to stderr), then sleeps until it is killed.
 *
 * <p>Arguments: {@code <connect string> <lock path> <session timeout ms>}.
 */
public final class ChildLockHolder {

    private ChildLockHolder() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 3) {
            System.err.println("usage: ChildLockHolder <connect string> <lock path> <session timeout ms>");
            System.exit(2);
        }
        ZkClient client = FaultFixtures.client(args[0], Duration.ofMillis(Long.parseLong(args[2])));
        ZkMutex mutex = new ZkMutex(client, args[1]);
        mutex.lock();
        System.out.println("HELD " + mutex.fencingToken());
        System.out.flush();
        for (;;) {
            Thread.sleep(Long.MAX_VALUE); // until SIGKILL: no shutdown hook, no unlock, no close
        }
    }
}
