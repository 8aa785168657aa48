package io.zkcoord.session;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.StaticHostProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends on the ensemble a session that the client presumed lost by itself (no server reached for
 * its whole timeout) and gave up on.
 *
 * <p>Why: the ensemble may still hold that session. A whole ensemble that restarts restores its
 * sessions from its data, each with a fresh timeout, so the old session and every ephemeral node
 * of it (lock nodes, election nodes) would stand ahead of the client's new session in every queue
 * for one more session timeout. So, as soon as the session is given up, a handle is opened with its
 * id and password: it connects when the ensemble is reachable again, and is then closed, which
 * closes the session and deletes its nodes at once (ZooKeeper's own close-session request). If the
 * ensemble answers that the session has expired, there is nothing left to end.
 *
 * <p>It never delays the new session: it is a handle of its own, opened beside the new one.
 * Bounded: it gives up once the client's new session has been established for the old session's
 * timeout (by then the old session has expired on the ensemble anyway), or when the client closes.
 *
 * <p>Thread-safe: the handle's events and the client's calls may come on any thread; the handle is
 * closed once.
 */
final class StaleSession implements Watcher {

    private static final Logger log = LoggerFactory.getLogger(StaleSession.class);

    private final String name;
    private final long id;
    private final int timeoutMillis;
    /** Completed once the constructor has the handle: its first event may come before that. */
    private final CompletableFuture<ZooKeeper> handle = new CompletableFuture<>();
    private final AtomicBoolean done = new AtomicBoolean();

    /**
     * Opens the handle; it connects in the background.
     *
     * @param settings the client's settings (connect string, client configuration, authorizations)
     * @param name the client's name, for threads and messages
     * @param id the session's id
     * @param password the session's password
     * @param timeoutMillis the session's negotiated timeout
     * @throws IOException if ZooKeeper's client cannot make the handle
     */
    StaleSession(ClientSettings settings, String name, long id, byte[] password, int timeoutMillis) throws IOException {
        this.name = name;
        this.id = id;
        this.timeoutMillis = timeoutMillis;
        List<InetSocketAddress> servers = ConnectString.parse(settings.connectString()).servers().stream()
                .map(s -> InetSocketAddress.createUnresolved(s.host(), s.port()))
                .toList();
        ZooKeeper zooKeeper = new ZooKeeper(settings.connectString(), timeoutMillis, this, id, password, false,
                new StaticHostProvider(servers), settings.clientConfig());
        for (ClientSettings.Auth auth : settings.auths()) {
            zooKeeper.addAuthInfo(auth.scheme(), auth.credentials());
        }
        handle.complete(zooKeeper);
    }

    /** @return the session's id */
    long id() {
        return id;
    }

    /** @return true once the handle is closed (the session ended, expired, or given up) */
    boolean isDone() {
        return done.get();
    }

    /**
     * The client has a new session, so the ensemble is reachable: the old session is ended within
     * a round trip if it still exists; past its own timeout from now it has expired anyway, and
     * the handle is given up.
     */
    void newSessionEstablished(ScheduledExecutorService scheduler) {
        scheduler.schedule(() -> finish(false, "its timeout passed since the ensemble was reachable again"),
                timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** The client closes: stop trying; the ensemble expires the session by itself if it holds it. */
    void abandon() {
        finish(false, "the client closed");
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() != Event.EventType.None) {
            return;
        }
        switch (event.getState()) {
            case SyncConnected:
                finish(true, "the ensemble still held it; closed it there, its ephemeral nodes are deleted");
                break;
            case Expired:
                finish(false, "the ensemble had already expired it");
                break;
            case AuthFailed:
                finish(false, "authentication failed; the ensemble expires it after its timeout");
                break;
            default:
                break;
        }
    }

    private void finish(boolean closeOnEnsemble, String why) {
        if (!done.compareAndSet(false, true)) {
            return;
        }
        if (closeOnEnsemble) {
            log.info("{}: session 0x{}, presumed lost: {}", name, Long.toHexString(id), why);
        } else {
            log.debug("{}: session 0x{}, presumed lost: {}", name, Long.toHexString(id), why);
        }
        handle.thenAccept(zk -> HandleCloser.closeInBackground(zk, closeOnEnsemble, name + "-close-stale-session"));
    }
}
