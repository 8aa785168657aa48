package io.zkcoord.barrier;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.once.OnceWriter;
import io.zkcoord.once.OnceWriters;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.Waits;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A latch all processes wait on, that can be armed again once open.
 *
 * <pre>{@code
 * ZkCountDownLatch ready = new ZkCountDownLatch(client, "/latches/ready");
 * ready.trySetCount(3);                          // one process arms it
 * ready.countDown();                             // each of three workers, once
 * boolean open = ready.await(Duration.ofMinutes(1));   // anyone waits
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Rounds.</b> {@link #trySetCount} arms a new round (a generation) when the latch is
 *       absent or open; {@link #await} waits for the round current when it began. A waiter of a
 *       round that opened returns {@code true}, even if the latch was armed again before it
 *       looked: re-arming never holds back the earlier round's waiters.
 *   <li><b>Exactly once.</b> A {@link #countDown()} that returned counted exactly one, even when
 *       its reply was lost (as {@link io.zkcoord.value.ZkAtomicLong}); one at zero counts nothing.
 *       A {@code true} from {@link #trySetCount} armed exactly one round.
 *   <li><b>No early pass.</b> A waiter passes only on the ensemble's word that its round's gate
 *       is gone (the deletion event, or a read); any other wake-up checks again.
 *   <li><b>Watches.</b> A waiter holds one watch, on its round's gate, which only the opening
 *       count-down touches: opening a latch that N waiters (in N sessions) wait on costs N
 *       notifications, and the count-downs before it none. A waiter whose time runs out removes
 *       its watch and leaves no node.
 * </ul>
 * The latch node holds 12 bytes (round, count); its children are the rounds' gates and the
 * writers' markers (ephemeral). Failures: {@link io.zkcoord.CommitOutcomeUnknownException} when a
 * write's session ended with it unanswered, {@link io.zkcoord.CoordinationException} when the
 * client's retry policy gives up, {@link IllegalStateException} when the client is closed.
 *
 * <p>Thread-safe.
 */
public final class ZkCountDownLatch {

    private final String path;
    private final ClientServices services;
    private final OnceWriter writer;

    /**
     * @param client the client
     * @param path the latch's node; made (parents too) when first armed
     * @throws IllegalArgumentException if {@code client} is null or {@code path} is invalid
     */
    public ZkCountDownLatch(ZkClient client, String path) {
        this.path = QueuePaths.validate("latch", path);
        this.services = ClientServices.of(client);
        this.writer = OnceWriters.of(client, path);
    }

    /**
     * Arms the latch with {@code count} if it is absent or open (a new round); exactly once.
     *
     * @param count the count, positive
     * @return true if armed; false while a count runs (nothing written)
     * @throws IllegalArgumentException if {@code count < 1}
     */
    public boolean trySetCount(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
        return Waits.uninterruptibly(writer.submit(LatchRule.arm(path, count, services.aclFor(LatchRule.gate(path, 1)))))
                .result();
    }

    /** Counts down by one, exactly once; at zero (or absent) does nothing. The round opens at zero. */
    public void countDown() {
        Waits.uninterruptibly(writer.submit(LatchRule.countDown(path)));
    }

    /** @return what is left of the current round's count: 0 when absent or open */
    public int getCount() {
        return Waits.uninterruptibly(writer.submit(LatchRule.read(path))).result().count();
    }

    /**
     * Waits until the round current now opens.
     *
     * @param timeout how long to wait at most; the first look is taken even when it is zero (at most 1 s
     *     when the ensemble is slow to answer), returning within the timeout otherwise (plus at
     *     most 200 ms to remove the watch)
     * @return true once open (at once if it is); false if the time ran out (the watch is removed)
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws InterruptedException if interrupted (the watch is removed)
     */
    public boolean await(Duration timeout) throws InterruptedException {
        return Waiting.await(awaitWait(), timeout);
    }

    /**
     * Waits without blocking until the round current now opens.
     *
     * @return completes (on a library thread) once open; cancelling it stops the wait and removes
     *     its watch
     */
    public CompletableFuture<Void> awaitAsync() {
        return Waiting.async(awaitWait(), services);
    }

    private CompletableFuture<NodeWait> awaitWait() {
        return writer.submit(LatchRule.read(path)).thenApply(outcome -> {
            LatchRule.Round round = outcome.result();
            return round.open() ? null : NodeWait.untilGone(services, LatchRule.gate(path, round.generation()));
        });
    }

    @Override
    public String toString() {
        return "ZkCountDownLatch[" + path + "]";
    }
}
