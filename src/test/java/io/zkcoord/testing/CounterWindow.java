package io.zkcoord.testing;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the server did between two {@code mntr} readings: watch notifications, requests, writes and
 * reads. The closing reading is taken once the counters have settled (two readings 20 ms apart
 * differ by nothing but the later call), and the window's own {@code mntr} calls are not counted
 * as requests. Not thread-safe: one test thread opens and closes it.
 */
public final class CounterWindow {

    private final FourLetterWords flw;
    private final Map<String, String> before;
    private Map<String, String> after;
    private int mntrCalls;

    private CounterWindow(FourLetterWords flw) {
        this.flw = flw;
        this.before = flw.mntr();
    }

    /** Opens a window with one {@code mntr} reading now. */
    public static CounterWindow open(FourLetterWords flw) {
        return new CounterWindow(flw);
    }

    /** Closes the window once the counters have settled; {@link AssertionError} if they still move after 10 s. */
    public CounterWindow close() throws InterruptedException {
        after = settled(flw, this);
        return this;
    }

    /** Watch notifications the server sent inside the window. */
    public long fired() {
        return fired(after) - fired(before);
    }

    /** Requests the server received inside the window (pings included), less the window's own {@code mntr} calls. */
    public long requests() {
        return delta("zk_packets_received") - mntrCalls;
    }

    /** Writes ({@code zk_cnt_updatelatency}) inside the window. */
    public long writes() {
        return delta("zk_cnt_updatelatency");
    }

    /** Reads ({@code zk_cnt_readlatency}) inside the window. */
    public long reads() {
        return delta("zk_cnt_readlatency");
    }

    /** Reads {@code mntr} until the counters settle, and returns the last reading. */
    public static Map<String, String> settle(FourLetterWords flw) throws InterruptedException {
        return settled(flw, null);
    }

    private static Map<String, String> settled(FourLetterWords flw, CounterWindow counting)
            throws InterruptedException {
        Map<String, String> previous = mntr(flw, counting);
        for (int i = 0; i < 500; i++) {
            TimeUnit.MILLISECONDS.sleep(20);
            Map<String, String> now = mntr(flw, counting);
            if (fired(now) == fired(previous)
                    && value(now, "zk_packets_received") - value(previous, "zk_packets_received") == 1) {
                return now;
            }
            previous = now;
        }
        throw new AssertionError("server counters still moving after 10 s");
    }

    private static Map<String, String> mntr(FourLetterWords flw, CounterWindow counting) {
        if (counting != null) {
            counting.mntrCalls++;
        }
        return flw.mntr();
    }

    private long delta(String key) {
        return value(after, key) - value(before, key);
    }

    /** Watch notifications of every kind the server has sent, in an {@code mntr} reading. */
    public static long fired(Map<String, String> m) {
        return value(m, "zk_sum_node_created_watch_count") + value(m, "zk_sum_node_deleted_watch_count")
                + value(m, "zk_sum_node_changed_watch_count") + value(m, "zk_sum_node_children_watch_count");
    }

    /** The counter {@code key} of an {@code mntr} reading; throws {@link AssertionError} if the reading lacks it. */
    public static long value(Map<String, String> m, String key) {
        String v = m.get(key);
        if (v == null) {
            throw new AssertionError("mntr has no " + key);
        }
        return (long) Double.parseDouble(v);
    }
}
