package io.zkcoord.queue;

import io.zkcoord.internal.EventZxid;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * The lone holders of one session: grants whose view of their one directory showed their node
 * alone, so that their release may remove the directory with the node. A lone holder of a fresh
 * key keeps the watch of the directory's children that its granting read set: that read is
 * pipelined behind the create that made the directory in its own transaction (a create that
 * makes the directory is most likely alone), so the watch costs no request. While it has not
 * fired nobody queued, and the release sends {@code multi(delete node, delete dir)} at once. Once
 * a waiter's create has told the holder (one notification, no write), the release reads the queue
 * first ({@link DirectoryRemoval}) and, unless that waiter has gone again, deletes its node alone:
 * never a {@code multi} that the server refuses ({@code NOTEMPTY}, an error transaction written
 * like any other) before the node is deleted alone.
 *
 * <p>A grant whose read could not set the watch (decided on a watch and a stale view, or on a plain
 * read of a directory that existed) keeps none: its release reads the queue first too. A watch
 * that fired for a change before the holder's own node (its event's zxid is not above the node's
 * {@code czxid}: the release of an earlier hold of this session, say) says nothing of this hold,
 * and is not kept.
 *
 * <p>Invariants: at most one child watch per lone hold, set by its granting read; nobody listens
 * to the watch of a grant that is not alone, or whose release has begun (it fires once into
 * nothing, at the next change of the directory, or goes with the session); the table holds one
 * entry per watched lone hold not released yet, and goes with the session.
 *
 * <p>Thread-safe.
 */
final class LoneHolds {

    private final SharedWatches watches;
    /** Lone holds by their node's path. */
    private final Map<String, Hold> holds = new ConcurrentHashMap<>();

    LoneHolds(SharedWatches watches) {
        this.watches = watches;
    }

    /**
     * A watch of {@code dir}'s children for a read that may grant alone: pass {@link
     * Watch#watcher()} with the read, report its reply with {@link Watch#answered}, and hand it to
     * {@link #held} at a lone grant, or {@link Watch#cancel()} it.
     */
    Watch watch(String dir) {
        return new Watch(dir);
    }

    /** A child watch of a directory, from the read that set it; the events it saw. */
    final class Watch {
        private final SharedWatches.Subscription subscription;
        // Guarded by this.
        private boolean armed;
        private boolean cancelled;
        private boolean fired;
        /** The zxid of the event, once fired; {@link EventZxid#NO_ZXID} if it carried none (a 3.8 server or client). */
        private long firedZxid;
        private Hold hold;

        private Watch(String dir) {
            this.subscription = watches.watch(SharedWatches.Kind.CHILDREN, dir, this::fired);
        }

        /** @return the watcher to pass with the read */
        Watcher watcher() {
            return subscription.watcher();
        }

        /** The read's reply: {@code OK} set the watch (or it was set already and has not fired since). */
        synchronized void answered(Code code) {
            subscription.answered(code);
            armed = code == Code.OK;
        }

        /** Nobody listens any more; sends nothing (the watch, if set, fires once into nothing). */
        void cancel() {
            synchronized (this) {
                cancelled = true;
            }
            subscription.cancel();
        }

        private void fired(WatchedEvent event) {
            Hold told;
            synchronized (this) {
                if (cancelled || fired) {
                    return;
                }
                fired = true;
                firedZxid = EventZxid.of(event);
                told = hold;
            }
            if (told != null) {
                told.changed();
            }
        }

        /**
         * @return whether this watch still watches for {@code hold}: set by a read, and not fired
         *     before or at the hold's node; if it fired after it, the hold is told
         */
        private boolean adopt(Hold h) {
            boolean firedForUs;
            synchronized (this) {
                if (!armed || cancelled) {
                    return false;
                }
                if (fired && firedZxid != EventZxid.NO_ZXID && firedZxid <= h.czxid) {
                    return false; // fired for a change before our node: consumed, says nothing of us
                }
                firedForUs = fired;
                hold = h;
            }
            if (firedForUs) {
                h.changed();
            }
            return true;
        }
    }

    /** One lone hold: whether someone queued since its view, as far as its watch tells. */
    private static final class Hold {
        private final long czxid;
        private final Watch watch;
        // Guarded by this.
        private boolean joined;

        private Hold(long czxid, Watch watch) {
            this.czxid = czxid;
            this.watch = watch;
        }

        /** The watch fired: someone queued (or the directory changed otherwise): not alone. */
        synchronized void changed() {
            joined = true;
        }

        synchronized boolean joined() {
            return joined;
        }
    }

    /**
     * At a grant whose release may remove {@code dir}: keeps the watch the granting read set, if
     * it still watches for this hold ({@code node}, made at {@code czxid}); otherwise nothing is
     * kept, and the release looks first ({@link #released} answers null).
     *
     * @param granting the watch the granting read set, or null
     */
    void held(String node, long czxid, Watch granting) {
        if (granting == null) {
            return;
        }
        Hold hold = new Hold(czxid, granting);
        if (granting.adopt(hold)) {
            holds.put(node, hold);
        } else {
            granting.cancel();
        }
    }

    /**
     * The release of {@code node} begins: the hold leaves the table and stops listening (the
     * release's own delete fires the watch, into nothing).
     *
     * @return true if the release may try to remove the directory (nobody queued, as far as the
     *     watch tells), false if someone queued since the hold's view; null if {@code node} has no
     *     watch (not held alone, a multi-lock, or a grant whose read could not set it)
     */
    Boolean released(String node) {
        Hold hold = holds.remove(node);
        if (hold == null) {
            return null;
        }
        hold.watch.cancel();
        return !hold.joined();
    }

    /** @return lone holds not released yet, for tests */
    int size() {
        return holds.size();
    }
}
