package io.zkcoord.bench;

import io.zkcoord.testing.FourLetterWords;
import java.util.Map;

/**
 * The server's own counters, read with the four-letter {@code mntr}: requests received, watch
 * notifications sent, watches set. Each {@code mntr} call is itself one packet; {@link #calibrate()}
 * measures that, and {@link #requests} subtracts it.
 */
final class ServerCounters {

    /** One {@code mntr} reading. */
    record Snapshot(long packets, long watchesFired, long watchCount) {
    }

    private final FourLetterWords server;
    /** Packets one {@code mntr} call adds to {@code zk_packets_received}; measured by {@link #calibrate()}. */
    private long mntrPackets = 1;

    ServerCounters(FourLetterWords server) {
        this.server = server;
    }

    /** Reads the counters, once. */
    Snapshot snap() {
        Map<String, String> m = server.mntr();
        long fired = value(m, "zk_sum_node_created_watch_count") + value(m, "zk_sum_node_deleted_watch_count")
                + value(m, "zk_sum_node_changed_watch_count") + value(m, "zk_sum_node_children_watch_count");
        return new Snapshot(value(m, "zk_packets_received"), fired, value(m, "zk_watch_count"));
    }

    /**
     * Measures what one {@code mntr} call adds to the packet count: the smallest difference of
     * back-to-back readings while nothing else talks to the server.
     *
     * @return packets per {@code mntr} call
     */
    long calibrate() {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            Snapshot a = snap();
            Snapshot b = snap();
            min = Math.min(min, b.packets() - a.packets());
        }
        mntrPackets = min;
        return min;
    }

    /** @return requests the server received between two readings, not counting the later {@code mntr} call */
    long requests(Snapshot before, Snapshot after) {
        return after.packets() - before.packets() - mntrPackets;
    }

    /** @return watch notifications the server sent between two readings */
    static long watchesFired(Snapshot before, Snapshot after) {
        return after.watchesFired() - before.watchesFired();
    }

    private static long value(Map<String, String> mntr, String key) {
        String v = mntr.get(key);
        if (v == null) {
            throw new IllegalStateException("mntr has no " + key);
        }
        return (long) Double.parseDouble(v);
    }
}
