package io.zkcoord.spring;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;

/**
 * Expires a session on the server, as a real expiry would (the library's test helper {@code
 * SessionExpiry} does the same; this module cannot see the library's test classes): a second handle
 * with the same id and password connects, then closes, which closes the session; repeated until the
 * server answers a new handle with {@code Expired}, since the owner may take the session back first.
 */
public final class ServerSideExpiry {

    private ServerSideExpiry() {
    }

    public static void expire(ZooKeeper zk, String connectString, Duration timeout) throws Exception {
        long id = zk.getSessionId();
        byte[] password = zk.getSessionPasswd();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
            ZooKeeper twin = new ZooKeeper(connectString, 4_000, e -> {
                if (e.getType() == EventType.None) {
                    states.add(e.getState());
                }
            }, id, password);
            try {
                KeeperState answer;
                do {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new AssertionError("session 0x" + Long.toHexString(id) + " still alive after " + timeout);
                    }
                    answer = states.poll(left, TimeUnit.NANOSECONDS);
                } while (answer != KeeperState.SyncConnected && answer != KeeperState.Expired);
                if (answer == KeeperState.Expired) {
                    return;
                }
            } finally {
                twin.close();
            }
        }
    }
}
