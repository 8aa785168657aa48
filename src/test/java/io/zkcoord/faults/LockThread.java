package io.zkcoord.faults;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One thread that plays one lock holder, step by step: holds belong to threads, so a test that asks
 * {@code isHeldByCurrentThread()} or unlocks must do it on the thread that locked. Thread-safe.
 */
public final class LockThread implements AutoCloseable {

    /** How long one step may take before the test fails instead of hanging. */
    public static final Duration STEP = Duration.ofSeconds(30);

    private final ExecutorService thread;
    private final String name;

    /** @param name the thread's name, also in lock nodes' owner data */
    public LockThread(String name) {
        this.name = name;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code step} on this thread without waiting for it. */
    public <T> Future<T> submit(Callable<T> step) {
        return thread.submit(step);
    }

    /** Runs {@code step} on this thread and returns its result, failing after {@link #STEP}. */
    public <T> T call(Callable<T> step) throws InterruptedException {
        return await(submit(step), STEP);
    }

    /** @return what {@code work} returned, rethrowing its failure; fails after {@code within} */
    public <T> T await(Future<T> work, Duration within) throws InterruptedException {
        try {
            return work.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(name + ": step not done within " + within.toMillis() + " ms", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Error err) {
                throw err;
            }
            throw new AssertionError(name + ": step failed: " + cause, cause);
        }
    }

    /** Stops the thread, interrupting a step still running (a test that failed half-way). */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}
