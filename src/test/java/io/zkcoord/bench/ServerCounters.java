package io.zkcoord.bench;

import io.zkcoord.testing.FourLetterWords;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's own counters, read with the four-letter {@code mntr}: requests received, watch
 * notifications sent, watches set. Each {@code mntr} call is itself a packet; {@link #calibrate()}
 * measures how many, and {@link #requests} subtracts every {@code mntr} call made after the
 * earlier reading, up to and including the later one.
 *
 * <p>The server counts a watch notification only after sending it: a client can act on a
 * notification before the counter moves. {@link #settled()} therefore reads until the counters
 * stand still.
 */
final class ServerCounters {

    /**
     * One {@code mntr} reading.
     *
     * @param fsyncs transaction log fsyncs so far ({@code zk_cnt_fsynctime}; the server counts
     *     only those it makes, none with {@code zookeeper.forceSync=no}); -1 if not reported
     * @param call the number of this {@code mntr} call, counting from 1
     * @param writes write requests processed so far ({@code zk_cnt_updatelatency}; a refused
     *     {@code multi} counts as one)
     * @param reads read requests (and pings) processed so far ({@code zk_cnt_readlatency})
     */
    record Snapshot(long packets, long watchesFired, long watchCount, long fsyncs, long call, long writes, long reads) {
    }

    private final FourLetterWords server;
    /** Packets one {@code mntr} call adds to {@code zk_packets_received}; measured by {@link #calibrate()}. */
    private long mntrPackets = 1;
    private final AtomicLong calls = new AtomicLong();

    ServerCounters(FourLetterWords server) {
        this.server = server;
    }

    /** Reads the counters, once. */
    Snapshot snap() {
        Map<String, String> m = server.mntr();
        long fired = value(m, "zk_sum_node_created_watch_count") + value(m, "zk_sum_node_deleted_watch_count")
                + value(m, "zk_sum_node_changed_watch_count") + value(m, "zk_sum_node_children_watch_count");
        return new Snapshot(value(m, "zk_packets_received"), fired, value(m, "zk_watch_count"),
                m.containsKey("zk_cnt_fsynctime") ? value(m, "zk_cnt_fsynctime") : -1, calls.incrementAndGet(),
                value(m, "zk_cnt_updatelatency"), value(m, "zk_cnt_readlatency"));
    }

    /**
     * Reads until two readings 20 ms apart differ by nothing but the later {@code mntr} call: no
     * request arrived and no notification was counted in between.
     */
    Snapshot settled() throws InterruptedException {
        Snapshot previous = snap();
        for (int i = 0; i < 500; i++) {
            TimeUnit.MILLISECONDS.sleep(20);
            Snapshot now = snap();
            if (now.watchesFired() == previous.watchesFired() && now.packets() - previous.packets() == mntrPackets) {
                return now;
            }
            previous = now;
        }
        throw new IllegalStateException("server counters still moving after 10 s");
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

    /** @return requests the server received between two readings, not counting the {@code mntr} calls */
    long requests(Snapshot before, Snapshot after) {
        return after.packets() - before.packets() - (after.call() - before.call()) * mntrPackets;
    }

    /** @return watch notifications the server sent between two readings */
    static long watchesFired(Snapshot before, Snapshot after) {
        return after.watchesFired() - before.watchesFired();
    }

    /** @return transaction log fsyncs between two readings, or -1 if the server does not report them */
    static long fsyncs(Snapshot before, Snapshot after) {
        return before.fsyncs() < 0 || after.fsyncs() < 0 ? -1 : after.fsyncs() - before.fsyncs();
    }

    private static long value(Map<String, String> mntr, String key) {
        String v = mntr.get(key);
        if (v == null) {
            throw new IllegalStateException("mntr has no " + key);
        }
        return (long) Double.parseDouble(v);
    }
}
