package io.zkcoord.cache;

import io.zkcoord.internal.InOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the listeners what the cache applied: one call at a time, in the order applied, on the
 * client's callback threads (never ZooKeeper's event thread), with no lock of the cache held. A
 * listener hears only what was applied after it was added, and nothing once removed. Whatever a
 * listener throws, an {@link Error} too, is logged and the others are still called.
 *
 * <p>Thread-safe.
 */
final class ListenerDispatch {

    private static final Logger log = LoggerFactory.getLogger(ListenerDispatch.class);

    private final String cacheName;
    private final InOrder order;
    private final List<CacheListener> listeners = new CopyOnWriteArrayList<>();
    /** Runs once the listeners have heard {@code initialized()}. */
    private final Runnable afterInitialized;

    ListenerDispatch(String cacheName, Executor callbacks, Runnable afterInitialized) {
        this.cacheName = cacheName;
        this.order = new InOrder(callbacks);
        this.afterInitialized = afterInitialized;
    }

    void add(CacheListener listener) {
        listeners.add(listener);
    }

    void remove(CacheListener listener) {
        listeners.remove(listener);
    }

    /** Forgets every listener: nothing more is called. */
    void clear() {
        listeners.clear();
    }

    /** @param events what was just applied, in order; the listeners registered now hear them */
    void publish(List<CacheEvent> events) {
        if (events.isEmpty() || listeners.isEmpty()) {
            return;
        }
        CacheListener[] targets = listeners.toArray(new CacheListener[0]);
        order.execute(() -> {
            for (CacheEvent e : events) {
                deliver(targets, e);
            }
        });
    }

    /** The first load is applied: the listeners registered now hear {@code initialized()}, then waiters are released. */
    void initialized() {
        CacheListener[] targets = listeners.toArray(new CacheListener[0]);
        order.execute(() -> {
            for (CacheListener l : targets) {
                if (listeners.contains(l)) {
                    call(l, "initialized", CacheListener::initialized);
                }
            }
            afterInitialized.run();
        });
    }

    private void deliver(CacheListener[] targets, CacheEvent e) {
        CachedNode before = e.before() == null ? null : e.before().toCached(e.path());
        CachedNode after = e.after() == null ? null : e.after().toCached(e.path());
        for (CacheListener l : targets) {
            if (!listeners.contains(l)) {
                continue; // removed meanwhile
            }
            switch (e.kind()) {
                case CREATED -> call(l, e, x -> x.created(after));
                case CHANGED -> call(l, e, x -> x.changed(before, after));
                case DELETED -> call(l, e, x -> x.deleted(before));
                default -> throw new IllegalStateException(e.toString());
            }
        }
    }

    private void call(CacheListener listener, Object what, java.util.function.Consumer<CacheListener> call) {
        try {
            call.accept(listener);
        } catch (Throwable t) {
            // Even an Error: one listener must not stop the others, nor the cache.
            log.error("{}: listener {} failed on {}", cacheName, listener, what, t);
        }
    }
}
