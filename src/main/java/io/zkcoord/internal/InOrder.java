package io.zkcoord.internal;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order given, on an underlying executor (the client's callback
 * threads): the listeners of one election (or group, or shard member) see its events in order, never two at once, never on
 * ZooKeeper's threads. Whatever a task throws is logged. Thread-safe.
 */
public final class InOrder implements Executor {

    private static final Logger log = LoggerFactory.getLogger(InOrder.class);

    /** True on a thread while it runs this executor's tasks. */
    private final ThreadLocal<Boolean> inside = ThreadLocal.withInitial(() -> false);
    private final Executor underlying;
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private boolean running;

    public InOrder(Executor underlying) {
        this.underlying = underlying;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (tasks) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        underlying.execute(this::drain);
    }

    /** @return true if the calling thread is running one of this executor's tasks (a listener) */
    public boolean calledFromTask() {
        return inside.get();
    }

    private void drain() {
        inside.set(true);
        try {
            drainTasks();
        } finally {
            inside.set(false);
        }
    }

    private void drainTasks() {
        for (;;) {
            Runnable next;
            synchronized (tasks) {
                next = tasks.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (Throwable t) {
                log.error("a listener task failed", t);
            }
        }
    }
}
