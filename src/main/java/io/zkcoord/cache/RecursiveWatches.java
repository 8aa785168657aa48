package io.zkcoord.cache;

import java.util.HashMap;
import java.util.Map;

/**
 * The caches of one client that watch each path, per session: who removes the server's watch.
 *
 * <p>Why: the server keeps one persistent recursive watch per path and session, however many
 * caches of the session set it, and ZooKeeper 3.9.4 answers {@code removeWatches(path, watcher,
 * ..)} for such a watch with success while keeping it (checked: {@code wchs} still counts it). Only
 * {@code removeAllWatches(path, PersistentRecursive)} removes it, for every watcher of the session on
 * that path, on the server and in the client. So a closing cache removes only its own watcher from
 * the client while another cache of the session watches the same path, and the last one removes
 * them all.
 *
 * <p>One per client ({@code ClientServices.shared}). Thread-safe.
 */
final class RecursiveWatches {

    private record Key(long session, String path) { }

    // Guarded by this.
    private final Map<Key, Integer> watchers = new HashMap<>();

    /** A cache is about to set its watch on {@code path} in {@code session}. */
    synchronized void adding(long session, String path) {
        watchers.merge(new Key(session, path), 1, Integer::sum);
    }

    /**
     * A cache no longer watches {@code path} in {@code session} (its watch failed, or it closes).
     *
     * @return true if no other cache of the session watches it: the server's watch may go
     */
    synchronized boolean removed(long session, String path) {
        Key key = new Key(session, path);
        Integer left = watchers.merge(key, -1, Integer::sum);
        if (left == null || left <= 0) {
            watchers.remove(key);
            return true;
        }
        return false;
    }

    /** Forgets every entry of a session that ended (its handle, and its watches, are gone). */
    synchronized void sessionEnded(long session) {
        watchers.keySet().removeIf(k -> k.session() == session);
    }
}
