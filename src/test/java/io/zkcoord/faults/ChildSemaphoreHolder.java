package io.zkcoord.faults;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.semaphore.ZkSemaphore;
import java.time.Duration;

/**
 * The client JVM of {@link SemaphoreFaultTest}'s SIGKILL scenario, run as a child {@code java} process:
 * connects, takes {@code <leases>} leases of the semaphore one after the other, prints {@code HELD <session id>
 * <fencing token>...} on stdout (the only line it ever prints there; logs go to stderr), then sleeps until it is
 * killed.
 *
 * <p>Arguments: {@code <connect string> <semaphore path> <permits> <leases> <session timeout ms>}.
 */
public final class ChildSemaphoreHolder {

    private ChildSemaphoreHolder() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 5) {
            System.err.println("usage: ChildSemaphoreHolder <connect string> <semaphore path> <permits> <leases>"
                    + " <session timeout ms>");
            System.exit(2);
        }
        ZkClient client = FaultFixtures.client(args[0], Duration.ofMillis(Long.parseLong(args[4])));
        ZkSemaphore semaphore = new ZkSemaphore(client, args[1], Integer.parseInt(args[2]));
        StringBuilder held = new StringBuilder("HELD ").append(client.sessionId());
        for (int i = Integer.parseInt(args[3]); i > 0; i--) {
            ZkLease lease = semaphore.acquire(); // kept valid until the kill: never released
            held.append(' ').append(lease.fencingToken());
        }
        System.out.println(held);
        System.out.flush();
        for (;;) {
            new java.util.concurrent.CountDownLatch(1).await(); // until SIGKILL: no shutdown hook, no release, no close
        }
    }
}
