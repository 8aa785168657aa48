package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.time.Duration;
import java.util.concurrent.Future;
import org.apache.zookeeper.ZooKeeper;

/**
 * The queue the single-mutex fault scenarios start from, on one lock directory: A (client a) holds the
 * mutex and has written through the checker; B (client b) waits behind it and writes once it holds; and,
 * in the scenarios where A loses its session, A2, a second thread of client a, waits behind B. Each party
 * runs on a {@link LockThread} of its own, since holds belong to threads; both mutexes report losses to the
 * checker.
 */
final class MutexQueue implements AutoCloseable {

    final ZkMutex ma;
    final ZkMutex mb;
    /** A's thread. */
    final LockThread holder;
    /** B's thread. */
    final LockThread waiter;
    /** A2's thread. */
    final LockThread sibling;

    private final InvariantChecker checker;
    private final String dir;
    private final Duration wait;
    private InvariantChecker.Entry ea;
    private Future<InvariantChecker.Entry> fb;
    private Future<InvariantChecker.Entry> fa2;

    /** @param threadPrefix names the threads {@code <prefix>-holder}, {@code -waiter} and {@code -sibling} */
    MutexQueue(String threadPrefix, InvariantChecker checker, ZkClient a, ZkClient b, String dir, Duration wait) {
        this.checker = checker;
        this.dir = dir;
        this.wait = wait;
        this.ma = checker.tracked(new ZkMutex(a, dir));
        this.mb = checker.tracked(new ZkMutex(b, dir));
        this.holder = new LockThread(threadPrefix + "-holder");
        this.waiter = new LockThread(threadPrefix + "-waiter");
        this.sibling = new LockThread(threadPrefix + "-sibling");
    }

    /**
     * A takes the lock and writes (its write must be accepted); then B asks for it and is queued behind A,
     * as {@code look} sees the directory.
     *
     * @return A's entry
     */
    InvariantChecker.Entry holderThenWaiter(ZooKeeper look) throws InterruptedException {
        ea = holder.call(FaultFixtures.lockAndWrite(checker, "A", ma, "first write of the holder"));
        fb = waiter.submit(FaultFixtures.lockAndWrite(checker, "B", mb, "write of the next holder"));
        FaultFixtures.awaitChildren("B queued behind A", look, dir, 2, wait);
        return ea;
    }

    /** A2, a second thread of A's client, asks for the lock and is queued behind B, as {@code look} sees it. */
    void siblingBehindWaiter(ZooKeeper look) {
        fa2 = sibling.submit(FaultFixtures.lockAndEnter(checker, "A2", ma));
        FaultFixtures.awaitChildren("A2 queued behind B", look, dir, 3, wait);
    }

    /** @return what A's thread believes: whether it holds the mutex */
    boolean holderHolds() throws InterruptedException {
        return holder.call(ma::isHeldByCurrentThread);
    }

    /** @return whether the fenced resource accepts another write of A, with A's token, made on A's thread */
    boolean holderWrites() throws InterruptedException {
        return holder.call(() -> checker.write(ea));
    }

    /** @return whether B's lock() has ended */
    boolean waiterDone() {
        return fb.isDone();
    }

    /** @return B's entry, once B holds (and has written) */
    InvariantChecker.Entry awaitWaiter() throws InterruptedException {
        return waiter.await(fb, wait);
    }

    /** On A's thread: A leaves and unlocks. */
    void releaseHolder() throws InterruptedException {
        holder.call(FaultFixtures.leaveAndUnlock(checker, ea, ma));
    }

    /** On B's thread: B leaves and unlocks. */
    void releaseWaiter(InvariantChecker.Entry eb) throws InterruptedException {
        waiter.call(FaultFixtures.leaveAndUnlock(checker, eb, mb));
    }

    /**
     * Once A and B have released: A2, queued in A's old session, gets the lock with a token above B's (it
     * queued again, behind B) and holds it; then it leaves and unlocks.
     */
    void awaitRequeuedSiblingThenRelease(InvariantChecker.Entry eb) throws InterruptedException {
        InvariantChecker.Entry ea2 = sibling.await(fa2, wait);
        assertTrue(ea2.token() > eb.token(), "A2 queued again, behind B");
        assertTrue(sibling.call(ma::isHeldByCurrentThread));
        sibling.call(FaultFixtures.leaveAndUnlock(checker, ea2, ma));
    }

    /** Stops the three threads. */
    @Override
    public void close() {
        holder.close();
        waiter.close();
        sibling.close();
    }
}
