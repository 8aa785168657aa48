package io.zkcoord.session;

import io.zkcoord.ZkSession;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * One raw ZooKeeper handle of a client and the session it established, if any. Its events go to
 * the client's events thread, where {@link SessionLifecycle} decides what they mean.
 *
 * <p>Thread-safety: {@link #session} is volatile; {@link #lost} and {@link #checkingChroot} are
 * read and written on the events thread only.
 */
final class Handle implements Watcher {

    final ZooKeeper zooKeeper;
    /** Set on the events thread when this handle first connects; read by close() on any thread. */
    volatile ZkSession session;
    /** Set on the events thread once this handle's session was reported lost. */
    boolean lost;
    /** Set on the events thread once the chroot check for this handle's first connection began. */
    boolean checkingChroot;

    private final Executor events;
    private final BiConsumer<Handle, WatchedEvent> onEvent;

    /**
     * Opens the handle (ZooKeeper's client starts connecting at once) and adds the client's
     * authorizations to it.
     *
     * @param settings the client's settings
     * @param events the client's events thread
     * @param onEvent told each event of this handle, on {@code events}
     * @throws IOException if ZooKeeper's client cannot be made
     */
    Handle(ClientSettings settings, Executor events, BiConsumer<Handle, WatchedEvent> onEvent) throws IOException {
        this.events = events;
        this.onEvent = onEvent;
        zooKeeper = new ZooKeeper(settings.connectString(), (int) settings.sessionTimeout().toMillis(), this,
                false, settings.clientConfig());
        for (ClientSettings.Auth auth : settings.auths()) {
            zooKeeper.addAuthInfo(auth.scheme(), auth.credentials());
        }
    }

    @Override
    public void process(WatchedEvent event) {
        try {
            events.execute(() -> onEvent.accept(this, event));
        } catch (RejectedExecutionException closing) {
            // the client is closing: no state change matters any more
        }
    }
}
