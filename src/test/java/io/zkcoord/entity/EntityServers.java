package io.zkcoord.entity;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** In-process servers for the per-entity tests. */
final class EntityServers {

    /** The server's interval between container reaps (ZooKeeper reads it when a server starts). */
    static final String CHECK_INTERVAL = "znode.container.checkIntervalMs";

    private EntityServers() {
    }

    /**
     * A server whose container reaper waits an hour between runs, so that a test sees only the
     * directories the library itself removes (the property is restored once the server runs).
     * Tick 3 s: sessions up to 60 s.
     */
    static TestingServer withoutReaper() throws Exception {
        synchronized (EntityServers.class) {
            String before = System.getProperty(CHECK_INTERVAL);
            System.setProperty(CHECK_INTERVAL, String.valueOf(3_600_000));
            try {
                return new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 3_000, 0), true);
            } finally {
                if (before == null) {
                    System.clearProperty(CHECK_INTERVAL);
                } else {
                    System.setProperty(CHECK_INTERVAL, before);
                }
            }
        }
    }
}
