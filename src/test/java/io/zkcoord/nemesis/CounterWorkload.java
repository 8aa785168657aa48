package io.zkcoord.nemesis;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.value.ZkAtomicLong;
import java.nio.ByteBuffer;

/**
 * A counter under faults: every cycle adds one to a {@link ZkAtomicLong} ({@value #NODE} in the workload's
 * directory), recorded as a {@code write} of that node, so the checker's register rules apply: no two
 * acknowledged increments returned the same value (one counted twice, or one lost under another), and the final
 * value lies between the acknowledged increments and those plus the unknown ones ({@code info}: {@link
 * CommitOutcomeUnknownException}, or a process killed before it recorded the answer). No lock is involved: the
 * counter's own exactly-once writer is what is checked.
 */
final class CounterWorkload extends Workload {

    /** The counter's node, in the workload's directory. */
    static final String NODE = "value";

    private final String path;
    private final ZkAtomicLong counter;

    CounterWorkload(String name, Settings settings) {
        super(name, settings);
        this.path = dir + "/" + NODE;
        this.counter = new ZkAtomicLong(client, path);
    }

    /** @return the register event's value for the counter's node data: {@code count=N} */
    static String registerText(byte[] data) {
        return "count=" + ByteBuffer.wrap(data).getLong();
    }

    /** @return the node data of a counter at 0 (Curator's DistributedAtomicLong format) */
    static byte[] initial() {
        return new byte[Long.BYTES];
    }

    @Override
    void cycle() throws InterruptedException {
        long session = sessionOf(client);
        history.record(name, "invoke", "write", path, 0, session, "increment");
        try {
            long value = counter.incrementAndGet();
            history.record(name, "ok", "write", path, 0, session, "count=" + value + " prev=0");
        } catch (CommitOutcomeUnknownException e) {
            history.record(name, "info", "write", path, 0, session, "unknown");
        } catch (CoordinationException | IllegalStateException e) {
            history.record(name, "fail", "write", path, 0, session, e.getClass().getSimpleName());
            pace(100, 300);
        }
        pace(20, 80);
    }
}
