package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.test.Fault;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Time limits during a <em>silent</em> partition ({@link ZkTestEnsemble#partition}: packets are dropped, not refused, so
 * a synchronous ZooKeeper call gets no answer at all until the client gives up on the connection). Every bounded
 * acquisition keeps its bound, an interrupt and a close() wake a waiter at once, and once the network returns no
 * node is left behind.
 *
 * <p>The promise is a bound plus about 200 ms; the assertions allow {@code SLACK_MS} (4 s) beyond it so that they
 * fail only for a wrong answer, never on a loaded 2-core machine. Every measured time is logged at INFO, prefixed
 * {@code MEASURED}.
 */
@Timeout(120)
@ZkEnsemble
class SilentPartitionTest {

    private static final Logger LOG = LoggerFactory.getLogger(SilentPartitionTest.class);

    private static final Duration SESSION = Duration.ofSeconds(10);
    /** Client read timeout is 2/3 of the session timeout: SUSPENDED comes about 6.7 s after the stall. */
    private static final Duration SUSPEND_WAIT = Duration.ofSeconds(20);
    /** How long a measured call may stay blocked in the partition before the test gives up on it and heals. */
    private static final Duration CAP = Duration.ofSeconds(25);
    /** How long a call may take to finish once the network is back (so it cannot leak a node later). */
    private static final Duration AFTER_HEAL = Duration.ofSeconds(30);
    /** Long enough for the old session to expire on the server if it was given up. */
    private static final Duration LEAK_WAIT = Duration.ofSeconds(30);
    /**
     * What a call may take beyond its own limit: room for a busy machine's scheduling, and still well short of what a
     * wrong answer takes. A call stuck in a ZooKeeper request while SUSPENDED waits for the client's connection
     * attempt to fail: with one server, the whole {@link #SESSION} (10 s) after the suspension; a call that waits for
     * the network, under the retry-forever policy, stays blocked until {@link #CAP}.
     */
    private static final long SLACK_MS = 4_000;

    private ZkTestEnsemble ensemble;
    private ZkClient client;
    /** Another client of the ensemble, never faulted: observes the lock directory, and holds the lock when a test needs a rival. */
    private ZkClient direct;
    private Fault partition;
    private String path;

    @BeforeEach
    void start(ZkTestEnsemble ensemble, ZkClient direct, TestInfo info) {
        this.ensemble = ensemble;
        this.direct = direct;
        client = ensemble.clientBuilder()
                .sessionTimeout(SESSION)
                .retryPolicy(RetryPolicy.forever(Duration.ofMillis(100)))
                .build();
        path = "/silent/" + info.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    }

    @AfterEach
    void stop() {
        heal();
        if (client != null) {
            client.close();
        }
    }

    /** tryLock(300 ms) while already SUSPENDED in a silent partition returns false within 300 ms + SLACK_MS. */
    @Test
    void timedTryLockWhileSuspendedKeepsItsDeadline() throws Exception {
        ZkMutex mutex = new ZkMutex(client, path);
        suspend();

        Call<Boolean> call = Call.start("tryLock-300ms", () -> {
            boolean got = mutex.tryLock(300, TimeUnit.MILLISECONDS);
            if (got) {
                mutex.unlock();
            }
            return got;
        });
        call.await(CAP);
        long took = call.millisSinceStart();
        LOG.info("MEASURED tryLock(300 ms) while suspended: {} ms ({})", took, call.describe());
        Executable timing = () -> {
            assertTrue(call.isDone(), "tryLock(300 ms) still blocked after " + CAP.toMillis() + " ms of silence");
            assertEquals(Boolean.FALSE, call.valueOrFailure(), "tryLock(300 ms) outcome");
            assertTrue(took <= 300 + SLACK_MS, "tryLock(300 ms) took " + took + " ms");
        };
        healAndAssert(timing, call);
    }

    /** tryLock() ("never waits") while already SUSPENDED in a silent partition returns false within SLACK_MS. */
    @Test
    void untimedTryLockWhileSuspendedDoesNotWait() throws Exception {
        ZkMutex mutex = new ZkMutex(client, path);
        suspend();

        Call<Boolean> call = Call.start("tryLock", () -> {
            boolean got = mutex.tryLock();
            if (got) {
                mutex.unlock();
            }
            return got;
        });
        call.await(CAP);
        long took = call.millisSinceStart();
        LOG.info("MEASURED tryLock() while suspended: {} ms ({})", took, call.describe());
        Executable timing = () -> {
            assertTrue(call.isDone(), "tryLock() still blocked after " + CAP.toMillis() + " ms of silence");
            assertEquals(Boolean.FALSE, call.valueOrFailure(), "tryLock() outcome");
            assertTrue(took <= SLACK_MS, "tryLock() took " + took + " ms");
        };
        healAndAssert(timing, call);
    }

    /** lockInterruptibly() blocked while SUSPENDED throws InterruptedException within SLACK_MS of the interrupt. */
    @Test
    void lockInterruptiblyWhileSuspendedAnswersAnInterrupt() throws Exception {
        ZkMutex mutex = new ZkMutex(client, path);
        suspend();

        Call<String> call = Call.start("lockInterruptibly", () -> {
            mutex.lockInterruptibly();
            mutex.unlock();
            return "acquired the lock";
        });
        call.awaitBlocked(Duration.ofSeconds(5));
        long interruptedAt = System.nanoTime();
        call.thread.interrupt();
        call.await(CAP);
        long took = call.millisSince(interruptedAt);
        LOG.info("MEASURED lockInterruptibly() after interrupt while suspended: {} ms ({})", took, call.describe());
        Executable timing = () -> {
            assertTrue(call.isDone(), "lockInterruptibly() still blocked " + CAP.toMillis()
                    + " ms after the interrupt");
            assertInstanceOf(InterruptedException.class, call.valueOrFailure(), "lockInterruptibly() outcome");
            assertTrue(took <= SLACK_MS, "lockInterruptibly() threw " + took + " ms after the interrupt");
        };
        healAndAssert(timing, call);
    }

    /** tryLock(8 s) waiting behind a holder, then cut off by a silent partition, returns false within 8 s + SLACK_MS. */
    @Test
    void timedTryLockWaitingWhenThePartitionStartsKeepsItsDeadline() throws Exception {
        ZkMutex mine = new ZkMutex(client, path);
        ZkMutex theirs = new ZkMutex(direct, path);
        theirs.lock();
        Call<Boolean> call;
        try {
            call = Call.start("tryLock-8s", () -> {
                boolean got = mine.tryLock(8, TimeUnit.SECONDS);
                if (got) {
                    mine.unlock();
                }
                return got;
            });
            LockQueue.awaitSize(direct, path, 2, Duration.ofSeconds(10));
            assertTrue(!call.isDone(), "tryLock(8 s) must be waiting behind the holder: " + call.describe());
            partition = ensemble.partition(client);
            LOG.info("stalled {} ms after tryLock(8 s) began", call.millisSinceStartNow());
            call.await(CAP);
        } finally {
            theirs.unlock();
        }
        long took = call.millisSinceStart();
        LOG.info("MEASURED tryLock(8 s) cut off while waiting: {} ms ({})", took, call.describe());
        Executable timing = () -> {
            assertTrue(call.isDone(), "tryLock(8 s) still blocked " + CAP.toMillis() + " ms into the partition");
            assertEquals(Boolean.FALSE, call.valueOrFailure(), "tryLock(8 s) outcome");
            assertTrue(took <= 8_000 + SLACK_MS, "tryLock(8 s) took " + took + " ms");
        };
        healAndAssert(timing, call);
    }

    /** close() while SUSPENDED returns within SLACK_MS and wakes a thread blocked in lock() with IllegalStateException within SLACK_MS. */
    @Test
    void closeWhileSuspendedWakesABlockedLock() throws Exception {
        ZkMutex mutex = new ZkMutex(client, path);
        suspend();

        Call<String> locker = Call.start("lock", () -> {
            mutex.lock();
            mutex.unlock();
            return "acquired the lock";
        });
        locker.awaitBlocked(Duration.ofSeconds(5));
        Call<Void> closer = Call.start("close", () -> {
            client.close();
            return null;
        });
        closer.await(CAP);
        long closeStart = closer.startNanos;
        long closeTook = closer.millisSinceStart();
        locker.await(Duration.ofNanos(Math.max(0, closeStart + CAP.toNanos() - System.nanoTime())));
        long wokenAfter = locker.millisSince(closeStart);
        LOG.info("MEASURED close() while suspended: {} ms ({})", closeTook, closer.describe());
        LOG.info("MEASURED lock() woken after close() was called: {} ms ({})", wokenAfter, locker.describe());
        Executable closeTiming = () -> {
            assertTrue(closer.isDone(), "close() still blocked after " + CAP.toMillis() + " ms");
            assertEquals(null, closer.valueOrFailure(), "close() outcome");
            assertTrue(closeTook <= SLACK_MS, "close() took " + closeTook + " ms");
        };
        Executable wakeTiming = () -> {
            assertTrue(locker.isDone(), "lock() still blocked " + CAP.toMillis() + " ms after close()");
            assertInstanceOf(IllegalStateException.class, locker.valueOrFailure(), "lock() outcome");
            assertTrue(wokenAfter <= SLACK_MS, "lock() woke " + wokenAfter + " ms after close() was called");
        };
        healAndAssert(() -> assertAll(closeTiming, wakeTiming), locker);
    }

    // ---------------------------------------------------------------- helpers

    /** Partitions the client and waits until the client reports SUSPENDED. */
    private void suspend() {
        long stalled = System.nanoTime();
        partition = ensemble.partition(client);
        Await.until("client SUSPENDED after the stall", SUSPEND_WAIT, () -> client.state() == ConnectionState.SUSPENDED);
        LOG.info("client SUSPENDED {} ms after the stall", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stalled));
    }

    /**
     * Heals the partition, lets {@code call} finish, and checks both {@code timing} and that no node is left under
     * the lock path; every failure is reported, the timing first.
     */
    private void healAndAssert(Executable timing, Call<?> call) {
        heal();
        call.await(AFTER_HEAL);
        assertAll("after the partition on " + path,
                timing,
                () -> Await.until(LEAK_WAIT, () -> children().isEmpty(),
                        () -> "no node left under " + path + " once the network returned; still " + children()
                                + " (" + call.thread.getName() + ": " + call.describe() + ")"));
    }

    private void heal() {
        if (partition != null) {
            partition.heal();
        }
    }

    private List<String> children() {
        return LockQueue.children(direct, path);
    }

    /** One call on a thread of its own, timed from the moment the thread starts it to the moment it ends. */
    private static final class Call<T> {
        final Thread thread;
        private final CompletableFuture<T> result = new CompletableFuture<>();
        volatile long startNanos;
        private volatile long endNanos;

        private Call(String name, Callable<T> body) {
            CompletableFuture<Void> started = new CompletableFuture<>();
            thread = new Thread(() -> {
                startNanos = System.nanoTime();
                started.complete(null);
                try {
                    T value = body.call();
                    endNanos = System.nanoTime();
                    result.complete(value);
                } catch (Throwable e) {
                    endNanos = System.nanoTime();
                    result.completeExceptionally(e);
                }
            }, "silent-" + name);
            thread.setDaemon(true);
            thread.start();
            started.join();
        }

        static <T> Call<T> start(String name, Callable<T> body) {
            return new Call<>(name, body);
        }

        /** Waits at most {@code max} for the call to end; returns whether it has. */
        boolean await(Duration max) {
            try {
                result.get(max.toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // reported by describe() and valueOrFailure()
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            return result.isDone();
        }

        /** Waits until the thread is parked inside the call (not merely still running). */
        void awaitBlocked(Duration max) {
            Await.until(max, () -> {
                Thread.State s = thread.getState();
                return !result.isDone() && (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING);
            }, () -> thread.getName() + " blocked in the call; " + describe() + ", thread " + thread.getState());
        }

        boolean isDone() {
            return result.isDone();
        }

        /** @return what the call returned, or what it threw */
        Object valueOrFailure() {
            try {
                return result.getNow(null);
            } catch (Exception e) {
                return e.getCause() != null ? e.getCause() : e;
            }
        }

        /** Milliseconds from the call's start to its end, or to now if it has not ended. */
        long millisSinceStart() {
            return millisSince(startNanos);
        }

        long millisSinceStartNow() {
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        }

        /** Milliseconds from {@code fromNanos} to the call's end, or to now if it has not ended. */
        long millisSince(long fromNanos) {
            long end = result.isDone() ? endNanos : System.nanoTime();
            return TimeUnit.NANOSECONDS.toMillis(end - fromNanos);
        }

        String describe() {
            if (!result.isDone()) {
                return "still running";
            }
            Object outcome = valueOrFailure();
            return outcome instanceof Throwable
                    ? "threw " + outcome
                    : "returned " + outcome;
        }
    }
}
