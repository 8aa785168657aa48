package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.lock.ZkMutex;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A listener that throws something other than a {@link RuntimeException} (an {@link Error}, or a checked
 * exception thrown sneakily) must not break the client: the other listeners still run, the lost session is
 * replaced, every hold is reported lost once, and locks can be taken again.
 */
@Timeout(120)
@ZkEnsemble
class ListenerErrorTest {

    private static final int HOLDERS = 8;
    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration ASK = Duration.ofSeconds(5);

    /** What the throwing listeners throw. */
    enum Failure {
        ASSERTION_ERROR {
            @Override
            RuntimeException raise(String where) {
                throw new AssertionError("listener failure on " + where);
            }
        },
        STACK_OVERFLOW_ERROR {
            @Override
            RuntimeException raise(String where) {
                throw new StackOverflowError("listener failure on " + where);
            }
        },
        CHECKED_EXCEPTION {
            @Override
            RuntimeException raise(String where) {
                throw ListenerErrorTest.<RuntimeException>sneakyThrow(new Exception("checked, on " + where));
            }
        };

        /** Throws; declared to return so that callers can write {@code throw failure.raise(...)}. */
        abstract RuntimeException raise(String where);
    }

    private ZkTestEnsemble ensemble;
    private ZkClient client;
    private final List<Holder> holders = new ArrayList<>();

    @BeforeEach
    void start(ZkTestEnsemble ensemble) {
        this.ensemble = ensemble;
        client = ensemble.clientBuilder()
                .sessionTimeout(SESSION)
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        for (Holder h : holders) {
            h.release();
        }
        client.close();
    }

    /** After a session expiry, throwing connection and loss listeners do not stop the others, the session is rebuilt, holds are lost once each, and locking works again. */
    @ParameterizedTest
    @EnumSource(Failure.class)
    void throwingListenersDoNotBreakTheClient(Failure failure) throws Exception {
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        client.addConnectionListener(state -> {
            if (state == ConnectionState.LOST) {
                throw failure.raise("connection state " + state);
            }
        });
        client.addConnectionListener(states::add);

        List<AtomicInteger> losses = new ArrayList<>();
        for (int i = 0; i < HOLDERS; i++) {
            ZkMutex mutex = new ZkMutex(client, "/listener-error/" + failure + "/lock-" + i);
            AtomicInteger lost = new AtomicInteger();
            mutex.addLossListener((lock, token) -> {
                throw failure.raise("loss of " + lock.path());
            });
            mutex.addLossListener((lock, token) -> lost.incrementAndGet());
            losses.add(lost);
            Holder holder = new Holder("holder-" + i, mutex);
            holders.add(holder);
            holder.start();
        }
        for (Holder h : holders) {
            h.awaitHeld(WAIT);
            assertTrue(h.holds(), h.getName() + " holds its lock before the expiry");
        }

        long before = client.sessionId();
        ensemble.expireSession(client);

        Await.until(WAIT, () -> lostThenReconnected(states) && sessionIdOrZero() != before
                        && losses.stream().allMatch(n -> n.get() >= 1)
                        && holders.stream().noneMatch(Holder::holdsOrUnknown),
                () -> "after the expiry (listeners throw " + failure + "): states " + states
                        + ", session 0x" + Long.toHexString(sessionIdOrZero()) + " (before 0x" + Long.toHexString(before)
                        + "), recorded losses " + losses + ", still held " + holders.stream()
                                .map(h -> h.getName() + "=" + h.holdsOrUnknown()).collect(Collectors.toList()));
        assertTrue(lostThenReconnected(states), "LOST then RECONNECTED: " + states);
        assertNotEquals(before, client.sessionId(), "a new session");

        ZkMutex again = new ZkMutex(client, "/listener-error/" + failure + "/again");
        CompletableFuture<Boolean> relock = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = again.tryLock(10, TimeUnit.SECONDS);
                if (got) {
                    again.unlock();
                }
                return got;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(relock.get(15, TimeUnit.SECONDS), "a new ZkMutex on the client locks again");

        for (int i = 0; i < HOLDERS; i++) {
            assertEquals(1, losses.get(i).get(), "recording loss listener of holder-" + i + " ran exactly once");
        }
        for (Holder h : holders) {
            h.release();
        }
        for (int i = 0; i < HOLDERS; i++) {
            String dir = "/listener-error/" + failure + "/lock-" + i;
            Await.until(WAIT, () -> children(dir).isEmpty(), () -> "no node left under " + dir + ": " + children(dir));
        }
    }

    private static boolean lostThenReconnected(List<ConnectionState> states) {
        int lost = states.indexOf(ConnectionState.LOST);
        return lost >= 0 && states.subList(lost + 1, states.size()).contains(ConnectionState.RECONNECTED);
    }

    private long sessionIdOrZero() {
        try {
            return client.sessionId();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private List<String> children(String dir) {
        try {
            return client.zooKeeper().getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            return List.of("<cannot read: " + e.code() + ">");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneakyThrow(Throwable t) throws E {
        throw (E) t;
    }

    /**
     * A thread that takes its lock with {@code lock()} and keeps it, answering questions on its own thread
     * ({@link #holds()}: its {@code isHeldByCurrentThread()}) until {@link #release()} makes it unlock and end.
     */
    private static final class Holder extends Thread {
        private final ZkMutex mutex;
        private final CompletableFuture<Long> held = new CompletableFuture<>();
        private final BlockingQueue<FutureTask<?>> questions = new LinkedBlockingQueue<>();
        private volatile boolean released;

        Holder(String name, ZkMutex mutex) {
            super(name);
            this.mutex = mutex;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                mutex.lock();
                held.complete(mutex.fencingToken());
                while (!released) {
                    questions.take().run();
                }
            } catch (Throwable e) {
                held.completeExceptionally(e);
            }
        }

        void awaitHeld(Duration max) throws Exception {
            held.get(max.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** @return the holder's {@code isHeldByCurrentThread()} */
        boolean holds() throws Exception {
            return ask(mutex::isHeldByCurrentThread);
        }

        /** {@link #holds()}, true if the thread does not answer. */
        boolean holdsOrUnknown() {
            try {
                return holds();
            } catch (Exception e) {
                return true;
            }
        }

        /** Makes the thread unlock (if it got the lock) and end; idempotent. */
        void release() throws InterruptedException {
            if (isAlive() && held.isDone() && !held.isCompletedExceptionally()) {
                try {
                    ask(() -> {
                        released = true;
                        mutex.unlock();
                        return null;
                    });
                } catch (Exception e) {
                    // unlock after a loss only logs; anything else is not this test's subject
                }
            }
            join(ASK.toMillis());
        }

        private <T> T ask(Callable<T> question) throws Exception {
            if (!isAlive()) {
                throw new IllegalStateException(getName() + " has ended");
            }
            FutureTask<T> task = new FutureTask<>(question);
            questions.add(task);
            return task.get(ASK.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
