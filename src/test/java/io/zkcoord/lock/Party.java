package io.zkcoord.lock;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One process of a read/write lock test: its own {@link ZkClient} (own session), its own {@link
 * ZkReadWriteLock} object, and one thread that does all its locking, since holds belong to threads.
 * Every wait for that thread fails after the test's deadline.
 */
final class Party implements AutoCloseable {

    final String name;
    final ZkClient client;
    final ZkReadWriteLock rw;
    private final ExecutorService thread;
    private final Consumer<String> events;
    private final Duration wait;

    /**
     * @param events told {@code "<name>+"} once the party holds a lock, {@code "<name>-"} just before it releases
     * @param wait how long any step on the party's thread may take
     */
    Party(String name, ZkClient client, String path, Consumer<String> events, Duration wait) {
        this.name = name;
        this.client = client;
        this.rw = new ZkReadWriteLock(client, path);
        this.events = events;
        this.wait = wait;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread th = new Thread(r, "party-" + name);
            th.setDaemon(true);
            return th;
        });
    }

    ZkLock read() {
        return rw.readLock();
    }

    ZkLock write() {
        return rw.writeLock();
    }

    long sessionId() {
        return client.sessionId();
    }

    /** Starts {@code task} on this party's thread. */
    <T> Future<T> submit(Callable<T> task) {
        return thread.submit(task);
    }

    /** Runs {@code task} on this party's thread and waits for it. */
    <T> T on(Callable<T> task) throws Exception {
        return get(submit(task), wait);
    }

    /** Starts {@code lock()} on this party's thread, then runs {@code whileHolding} there; the future ends with it. */
    <T> Future<T> lockLater(ZkLock lock, Callable<T> whileHolding) {
        return submit(() -> {
            lock.lock();
            events.accept(name + "+");
            return whileHolding.call();
        });
    }

    /** Starts {@code lock()} on this party's thread; the future ends when it holds. */
    Future<Void> lockLater(ZkLock lock) {
        return lockLater(lock, () -> null);
    }

    void lockNow(ZkLock lock) throws Exception {
        get(lockLater(lock), wait);
    }

    /** Unlocks on this party's thread, telling the events first. */
    void release(ZkLock lock) throws Exception {
        on(() -> {
            events.accept(name + "-");
            lock.unlock();
            return null;
        });
    }

    /** Unlocks on this party's thread, telling the events nothing. */
    void unlock(ZkLock lock) throws Exception {
        on(() -> {
            lock.unlock();
            return null;
        });
    }

    /** Closes the client (which wakes a thread still waiting in lock(), which then throws) and stops the thread. */
    @Override
    public void close() {
        client.close();
        thread.shutdownNow();
    }

    @Override
    public String toString() {
        return name;
    }

    /**
     * @return what {@code future} returned, rethrowing what its task threw
     * @throws AssertionError if it is not done within {@code within}
     */
    static <T> T get(Future<T> future, Duration within) throws Exception {
        try {
            return future.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        } catch (TimeoutException e) {
            throw new AssertionError("not done within " + within.toMillis() + " ms", e);
        }
    }
}
