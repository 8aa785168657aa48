package io.zkcoord.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.SessionLostException;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ManualClock;
import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.junit.jupiter.api.Test;

/**
 * {@link RetryLoop}'s rules, with a {@link ManualClock} so the schedule of sleeps is read back
 * instead of waited for. The calls here fail on purpose without touching a server; the same loop
 * against a real stopped server is tested in {@code ZkClientTest}.
 */
class RetryLoopTest {

    private static final String PATH = "/retry-loop/node";

    private final ManualClock clock = new ManualClock();

    /** A call failing with the given codes in turn, then returning "done"; counts its tries. */
    private static final class Scripted implements ZkCall<String> {
        final List<Code> failures;
        final List<KeeperException> thrown = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger tries = new AtomicInteger();

        Scripted(Code... failures) {
            this.failures = List.of(failures);
        }

        @Override
        public String call(org.apache.zookeeper.ZooKeeper zk) throws KeeperException {
            int n = tries.getAndIncrement();
            if (n < failures.size()) {
                KeeperException e = KeeperException.create(failures.get(n), PATH);
                thrown.add(e);
                throw e;
            }
            return "done";
        }
    }

    /** An endless source of one failure code. */
    private static ZkCall<String> always(Code code, AtomicInteger tries) {
        return zk -> {
            tries.incrementAndGet();
            throw KeeperException.create(code, PATH);
        };
    }

    /** CONNECTIONLOSS, OPERATIONTIMEOUT and SESSIONMOVED are retried after the policy's delay, and the result is returned. */
    @Test
    void passingErrorsAreRetriedAfterThePolicyDelay() throws Exception {
        RetryLoop loop = new RetryLoop(RetryPolicy.fixedDelay(Duration.ofMillis(100), 5), clock);
        Scripted call = new Scripted(Code.CONNECTIONLOSS, Code.OPERATIONTIMEOUT, Code.SESSIONMOVED);
        assertEquals("done", loop.run(PATH, () -> null, call));
        assertEquals(4, call.tries.get());
        assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(100), Duration.ofMillis(100)), clock.sleeps());
    }

    /** fixedDelay(100 ms, 3): 4 tries, 3 sleeps of 100 ms, then CoordinationException naming the path with the last KeeperException as cause. */
    @Test
    void givesUpWithTheLastKeeperExceptionAndThePath() {
        RetryLoop loop = new RetryLoop(RetryPolicy.fixedDelay(Duration.ofMillis(100), 3), clock);
        Scripted call = new Scripted(Code.CONNECTIONLOSS, Code.CONNECTIONLOSS, Code.CONNECTIONLOSS,
                Code.OPERATIONTIMEOUT, Code.CONNECTIONLOSS);
        CoordinationException e = assertThrows(CoordinationException.class, () -> loop.run(PATH, () -> null, call));
        assertFalse(e instanceof SessionLostException, e.toString());
        assertEquals(4, call.tries.get());
        assertSame(call.thrown.get(3), e.getCause());
        assertTrue(e.getMessage().contains(PATH), e.getMessage());
        assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(100), Duration.ofMillis(100)), clock.sleeps());
    }

    /** none(): the first passing failure is final, without any sleep. */
    @Test
    void noneTriesOnce() {
        RetryLoop loop = new RetryLoop(RetryPolicy.none(), clock);
        AtomicInteger tries = new AtomicInteger();
        CoordinationException e = assertThrows(CoordinationException.class,
                () -> loop.run(PATH, () -> null, always(Code.CONNECTIONLOSS, tries)));
        assertTrue(e.getCause() instanceof KeeperException.ConnectionLossException, String.valueOf(e.getCause()));
        assertEquals(1, tries.get());
        assertEquals(List.of(), clock.sleeps());
    }

    /** Exponential backoff (jitter pinned low) sleeps base, 2*base, ... halved, capped at max/2, and stops after maxRetries. */
    @Test
    void exponentialBackoffSchedule() {
        RetryLoop loop = new RetryLoop(new ExponentialBackoff(Duration.ofMillis(50), Duration.ofMillis(400), 6, () -> 0.0), clock);
        AtomicInteger tries = new AtomicInteger();
        assertThrows(CoordinationException.class, () -> loop.run(PATH, () -> null, always(Code.CONNECTIONLOSS, tries)));
        assertEquals(7, tries.get());
        assertEquals(List.of(25L, 50L, 100L, 200L, 200L, 200L),
                clock.sleeps().stream().map(Duration::toMillis).toList());
    }

    /** untilElapsed counts time on the injected clock, including time spent inside the calls. */
    @Test
    void untilElapsedUsesTheInjectedClock() {
        RetryLoop loop = new RetryLoop(RetryPolicy.untilElapsed(Duration.ofSeconds(1), Duration.ofMillis(100)), clock);
        AtomicInteger tries = new AtomicInteger();
        // Every try takes 200 ms of clock time: tries start at 0, 300, 600 and 900 ms; after the
        // 4th the elapsed time is 1100 ms, past 1 s, so it gives up.
        CoordinationException e = assertThrows(CoordinationException.class, () -> loop.run(PATH, () -> null, zk -> {
            tries.incrementAndGet();
            clock.advance(Duration.ofMillis(200));
            throw KeeperException.create(Code.CONNECTIONLOSS, PATH);
        }));
        assertEquals(4, tries.get());
        assertEquals(3, clock.sleeps().size());
        assertTrue(e.getMessage().contains(PATH), e.getMessage());
    }

    /** SESSIONEXPIRED is never retried: SessionLostException at once, with the KeeperException as cause. */
    @Test
    void sessionExpiredIsFinal() {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofMillis(10)), clock);
        AtomicInteger tries = new AtomicInteger();
        SessionLostException e = assertThrows(SessionLostException.class,
                () -> loop.run(PATH, () -> null, always(Code.SESSIONEXPIRED, tries)));
        assertTrue(e.getCause() instanceof KeeperException.SessionExpiredException, String.valueOf(e.getCause()));
        assertTrue(e.getMessage().contains(PATH), e.getMessage());
        assertEquals(1, tries.get());
        assertEquals(List.of(), clock.sleeps());
    }

    /** runOnAnySession (for calls not tied to a session) retries SESSIONEXPIRED on the next handle and gives up with CoordinationException, not SessionLostException. */
    @Test
    void sessionExpiredIsPassingOnAnySession() throws Exception {
        RetryLoop loop = new RetryLoop(RetryPolicy.fixedDelay(Duration.ofMillis(20), 2), clock);
        Scripted call = new Scripted(Code.SESSIONEXPIRED, Code.CONNECTIONLOSS);
        assertEquals("done", loop.runOnAnySession(PATH, () -> null, call));
        assertEquals(3, call.tries.get());
        Scripted endless = new Scripted(Code.SESSIONEXPIRED, Code.SESSIONEXPIRED, Code.SESSIONEXPIRED);
        CoordinationException e = assertThrows(CoordinationException.class, () -> loop.runOnAnySession(PATH, () -> null, endless));
        assertFalse(e instanceof SessionLostException, e.toString());
        assertSame(endless.thrown.get(2), e.getCause());
        assertTrue(e.getMessage().contains(PATH), e.getMessage());
        AtomicInteger tries = new AtomicInteger();
        assertThrows(KeeperException.NoNodeException.class, () -> loop.runOnAnySession(PATH, () -> null, always(Code.NONODE, tries)));
        assertEquals(1, tries.get());
    }

    /** Answers of the ensemble (NONODE, NODEEXISTS, NOAUTH, ...) are rethrown as they are, never retried. */
    @Test
    void otherKeeperExceptionsAreRethrownUnchanged() {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofMillis(10)), clock);
        for (Code code : new Code[] {Code.NONODE, Code.NODEEXISTS, Code.NOAUTH, Code.BADVERSION, Code.NOTEMPTY}) {
            AtomicInteger tries = new AtomicInteger();
            KeeperException e = assertThrows(KeeperException.class,
                    () -> loop.run(PATH, () -> null, always(code, tries)));
            assertEquals(code, e.code());
            assertEquals(1, tries.get(), code.toString());
        }
        assertEquals(List.of(), clock.sleeps());
    }

    /** An exception of the handle supplier (a session that ended, a closed client) ends the loop as it is. */
    @Test
    void handleSupplierFailureIsNotRetried() {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofMillis(10)), clock);
        AtomicInteger supplied = new AtomicInteger();
        SessionLostException lost = new SessionLostException("ended");
        assertSame(lost, assertThrows(SessionLostException.class, () -> loop.run(PATH, () -> {
            supplied.incrementAndGet();
            throw lost;
        }, zk -> "never")));
        assertEquals(1, supplied.get());
    }

    /** The handle is asked for again at every try, so a retry uses whatever handle is current then. */
    @Test
    void handleIsSuppliedAtEveryTry() throws Exception {
        RetryLoop loop = new RetryLoop(RetryPolicy.fixedDelay(Duration.ZERO, 5), clock);
        AtomicInteger supplied = new AtomicInteger();
        loop.run(PATH, () -> {
            supplied.incrementAndGet();
            return null;
        }, new Scripted(Code.CONNECTIONLOSS, Code.CONNECTIONLOSS));
        assertEquals(3, supplied.get());
    }

    /** An interrupt while sleeping between tries (real clock) ends the loop with InterruptedException at once. */
    @Test
    void interruptDuringTheSleepIsNotSwallowed() throws Exception {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofSeconds(30)), Clock.system());
        AtomicInteger tries = new AtomicInteger();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                loop.run(PATH, () -> null, always(Code.CONNECTIONLOSS, tries));
                outcome.set(new AssertionError("returned"));
            } catch (Throwable e) {
                outcome.set(e);
            }
        }, "retry-loop-interrupt-test");
        t.start();
        Await.until("the loop sleeps after its first try", Duration.ofSeconds(5),
                () -> tries.get() == 1 && t.getState() == Thread.State.TIMED_WAITING);
        long start = System.nanoTime();
        t.interrupt();
        // Half the 30 s sleep, room for a busy machine: a loop that swallowed the interrupt sleeps its 30 s out.
        t.join(15_000);
        assertFalse(t.isAlive(), "the loop did not end after an interrupt");
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(15)) < 0);
        assertTrue(outcome.get() instanceof InterruptedException, String.valueOf(outcome.get()));
        assertEquals(1, tries.get());
    }

    /** A thread already interrupted is not put to sleep: InterruptedException after the first failed try. */
    @Test
    void pendingInterruptEndsTheLoop() {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofMillis(10)), clock);
        AtomicInteger tries = new AtomicInteger();
        Thread.currentThread().interrupt();
        try {
            assertThrows(InterruptedException.class, () -> loop.run(PATH, () -> null, always(Code.CONNECTIONLOSS, tries)));
        } finally {
            Thread.interrupted();
        }
        assertEquals(1, tries.get());
    }

    /** An InterruptedException thrown by the call itself is passed on, not retried. */
    @Test
    void interruptedCallIsNotRetried() {
        RetryLoop loop = new RetryLoop(RetryPolicy.forever(Duration.ofMillis(10)), clock);
        AtomicInteger tries = new AtomicInteger();
        assertThrows(InterruptedException.class, () -> loop.run(PATH, () -> null, zk -> {
            tries.incrementAndGet();
            throw new InterruptedException("in the call");
        }));
        assertEquals(1, tries.get());
    }

    /** A null policy or clock is rejected. */
    @Test
    void constructorValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> new RetryLoop(null, clock));
        assertThrows(IllegalArgumentException.class, () -> new RetryLoop(RetryPolicy.none(), null));
    }
}
