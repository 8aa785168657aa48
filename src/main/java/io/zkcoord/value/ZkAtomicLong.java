package io.zkcoord.value;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.once.Change;
import io.zkcoord.once.OnceWriter;
import io.zkcoord.once.OnceWriters;
import io.zkcoord.once.Outcome;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.Waits;
import java.util.concurrent.CompletableFuture;

/**
 * A counter in one node: 8 bytes, big-endian, as Curator's {@code DistributedAtomicLong} stores
 * it. A missing node reads 0 (so {@code compareAndSet(0, x)} on a missing node makes it with x).
 *
 * <pre>{@code
 * ZkAtomicLong orders = new ZkAtomicLong(client, "/counters/orders");
 * long id = orders.incrementAndGet();     // applied exactly once, or it throws
 * }</pre>
 *
 * <h2>Exactly once</h2>
 * Every write is a conditional {@code setData} (guarded by the version the value was read with)
 * in one transaction with a write of this session's marker, an ephemeral child of the counter's
 * node that names the operation (see {@code docs/values-and-barriers.md}). When the connection
 * drops after a write was sent, the counter reads the marker back once reconnected and knows
 * whether that write landed: it never repeats it and never drops it. So:
 * <ul>
 *   <li>a value returned by {@link #addAndGet} (and its forms) is the counter's value right after
 *       that one addition, which was applied exactly once;
 *   <li>{@code true} from {@link #compareAndSet} means the update was applied exactly once, {@code
 *       false} that the value was not {@code expect} (read during the call), with nothing written;
 *   <li>under contention a write refused because another client wrote first is re-planned on the
 *       new value at once: nothing returns a "did not succeed" flag to loop on.
 * </ul>
 * <b>Failures.</b> {@link io.zkcoord.CommitOutcomeUnknownException} (a {@link
 * io.zkcoord.CoordinationException}) if a write was sent and unanswered when its session ended,
 * or when the client's retry policy gave up before it could be read back: it was applied once or
 * not at all. {@link io.zkcoord.CoordinationException} if the retry policy gave up with nothing
 * written, or the ensemble refused (no permission, data that is not 8 bytes, a version wrapped to
 * -1: see the docs). {@link IllegalStateException} if the client is closed.
 *
 * <p>Cost: an increment on a counter this client wrote last costs one request (the transaction);
 * a write refused because another client's landed first adds one read, after a random pause of
 * up to a few round trips (so that clients refused together do not all write again together).
 *
 * <p><b>Combining.</b> Operations of one client on one counter run one at a time, in call order;
 * those that arrive while one runs (from other threads, or {@link #addAndGetAsync} calls) wait,
 * and then go together as one write: planned one after another in call order, each answered as
 * if it had run alone at the instant that write landed. So a service whose threads add to one
 * counter sends one write per round trip, whatever the number of threads, and still gets a
 * distinct, exact value for every addition. If that one write fails for good (no permission, the
 * retry policy giving up), every operation in it fails the same way; an operation that fails on
 * the value itself (data that is not 8 bytes) fails alone, so a {@link #set} queued with it still
 * writes, as it would alone. Every operation combined into a write whose outcome ends unknown
 * throws {@link io.zkcoord.CommitOutcomeUnknownException}, even one that on the last state seen
 * would have written nothing (a {@link #get}, a {@link #compareAndSet} finding another value):
 * such a call may simply be made again.
 *
 * <p>Thread-safe. The blocking methods wait uninterruptibly (an interrupt is kept and set again on
 * return), bounded by the client's retry policy.
 */
public final class ZkAtomicLong {

    private final String path;
    private final ClientServices services;
    private final OnceWriter writer;

    /**
     * @param client the client to write with
     * @param path the counter's node; it and its parents are made on the first write
     * @throws IllegalArgumentException if {@code client} is null or {@code path} is not a valid
     *     node path
     */
    public ZkAtomicLong(ZkClient client, String path) {
        this.path = QueuePaths.validate("counter", path);
        this.services = ClientServices.of(client);
        this.writer = OnceWriters.of(client, path);
    }

    /**
     * Reads the counter (one request, after this client's pending writes to it).
     *
     * @return its value; 0 if the node is missing
     * @throws io.zkcoord.CoordinationException if the retry policy gives up, or the node's data is
     *     not 8 bytes
     */
    public long get() {
        return run(CounterRule.read(path));
    }

    /**
     * Adds one.
     *
     * @return the value right after this addition
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws io.zkcoord.CoordinationException see the class comment
     */
    public long incrementAndGet() {
        return addAndGet(1);
    }

    /**
     * Subtracts one.
     *
     * @return the value right after this subtraction
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws io.zkcoord.CoordinationException see the class comment
     */
    public long decrementAndGet() {
        return addAndGet(-1);
    }

    /**
     * Adds {@code delta} (wrapping on overflow, like {@link java.util.concurrent.atomic.AtomicLong}).
     * A delta of 0 reads.
     *
     * @param delta what to add
     * @return the value right after this addition
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws io.zkcoord.CoordinationException see the class comment
     */
    public long addAndGet(long delta) {
        return run(CounterRule.add(path, delta));
    }

    /**
     * Writes {@code update} if the counter holds {@code expect} (a missing node holds 0).
     *
     * @param expect the value expected
     * @param update the new value
     * @return true if written (exactly once); false if the value, read during this call, was not
     *     {@code expect} (nothing written)
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws io.zkcoord.CoordinationException see the class comment
     */
    public boolean compareAndSet(long expect, long update) {
        return run(CounterRule.compareAndSet(path, expect, update));
    }

    /**
     * Writes {@code value} whatever the counter holds (exactly once, so a lost reply never makes it
     * overwrite a later write of someone else).
     *
     * @param value the new value
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws io.zkcoord.CoordinationException see the class comment
     */
    public void set(long value) {
        run(CounterRule.set(value));
    }

    /**
     * As {@link #addAndGet}, without blocking.
     *
     * @param delta what to add
     * @return completes, on a library thread (never ZooKeeper's), with the value right after this
     *     addition, or exceptionally as {@link #addAndGet} throws
     */
    public CompletableFuture<Long> addAndGetAsync(long delta) {
        return writer.submitCombinable(CounterRule.add(path, delta)).thenApplyAsync(Outcome::result, services.userCallbacks());
    }

    private <R> R run(Change<R> change) {
        return Waits.uninterruptibly(writer.submitCombinable(change)).result();
    }

    @Override
    public String toString() {
        return "ZkAtomicLong[" + path + "]";
    }
}
