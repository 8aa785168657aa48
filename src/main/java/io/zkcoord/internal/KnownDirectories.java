package io.zkcoord.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one client has seen of the directories its recipes queue in: which exist, and which of
 * them the library made. A hint, never a promise: another client may delete or make a directory
 * at any moment, and every use of a hint survives it being wrong (a create that fails teaches the
 * truth, at the cost of one round trip; a removal that finds the directory busy deletes nothing).
 *
 * <p><b>Made by the library.</b> The library removes only directories it made. ZooKeeper does
 * not show a node's mode to clients (a {@code CONTAINER}'s stat looks like a persistent node's,
 * {@code ephemeralOwner} 0), so the library marks what it makes: a directory is created and its
 * data set again in the same transaction, which leaves a stat no other way of making a node
 * leaves: {@code version} 1 and {@code mzxid == czxid} ({@link #isLibraryMark}). Every read of a
 * directory's stat records whether it carries the mark; a directory removed and made again by
 * someone else is judged again by its new stat.
 *
 * <p><b>Contended keys.</b> A release whose view of the queue showed no node but its own tries to
 * remove the directory with its node; unless the lone holder's watch vouches for that view, it
 * reads the queue first, and finds whether someone queued since it looked (or, for a multi-lock,
 * the server refuses the removal: {@code NOTEMPTY}). From that finding ({@link #refused}) on, the
 * directory is contended for this client, and its
 * releases remove nothing there until a quiet cycle of its own or the directory's next lifetime
 * ({@link Contention}: the rule, and why), so steady contention pays no refused removal at every
 * handoff. A refused {@code delete} of the directory by an acquisition that gave up does not
 * count: the nodes it saw ahead of its own refuse it as well.
 *
 * <p><b>Hot keys.</b> A directory this client removed and then made again {@value #HOT_REMAKES}
 * times is a key in steady use (a lock taken over and over): this client no longer removes it, so
 * its uncontended cycle stays a plain create and delete. The server's container reaper removes it
 * once it stays empty. A key locked a few times, the common use of a lock per entity, is removed
 * by every last release.
 *
 * <p>Bounded: the {@value #DEFAULT_CAPACITY} directories used last are remembered, the others
 * forgotten, so a service that locks a new key every time (one lock per order id) holds no memory
 * for keys it never uses again. A forgotten directory is merely unknown.
 *
 * <p>Thread-safe: every method takes the object's monitor, briefly, except the count of running
 * acquisitions, a concurrent map of its own.
 */
public final class KnownDirectories {

    /** How many directories a client remembers. */
    public static final int DEFAULT_CAPACITY = 4096;

    /** How many times this client removed a directory and made it again before it counts as hot. */
    public static final int HOT_REMAKES = 3;

    /**
     * What is known of one directory.
     *
     * @param exists true if last seen to exist
     * @param libraryMade true if seen made by the library (its stat carries the mark)
     * @param shared true once another client was seen using it (it made the directory first, or
     *     removed it, or queued in it when this client's removal was refused)
     * @param removedByUs true if this client removed it last
     * @param remakes how many times this client made it again after removing it
     * @param contention what this client knows of contention in it ({@link Contention}), with its lifetime
     */
    private record Known(boolean exists, boolean libraryMade, boolean shared, boolean removedByUs, int remakes,
                         Contention contention) {
        static final Known NONE = new Known(false, false, false, false, 0, Contention.UNKNOWN);

        Known existing(boolean made) {
            return new Known(true, made, shared, false, remakes, contention);
        }

        Known gone(boolean byUs) {
            return new Known(false, false, shared, byUs, remakes, contention);
        }

        Known with(Contention c) {
            return new Known(exists, libraryMade, shared, removedByUs, remakes, c);
        }

        /** @return true if a removal may be tried as far as the directory goes: the library's, not a hot key */
        boolean ours() {
            return exists && libraryMade && remakes < HOT_REMAKES;
        }
    }

    private final Map<String, Known> known;
    /**
     * Acquisitions of this client running now, per directory (absent: none). Kept apart from
     * {@link #known}: it is exact, not a hint, and never forgotten while one runs.
     */
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> running =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Transactions making a directory, on their way; an entry lives until its reply. */
    private final Map<String, Gate> making = new java.util.HashMap<>();

    /** A directory's making transaction on its way, and the creates that wait for its reply. */
    private static final class Gate {
        final String owner;
        final java.util.ArrayDeque<Runnable> waiting = new java.util.ArrayDeque<>();
        /** The thread sending the waiting creates, once the reply came; guarded by the map. */
        Thread drainer;

        Gate(String owner) {
            this.owner = owner;
        }
    }

    /** @param capacity how many directories to remember, at least 1 */
    public KnownDirectories(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.known = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Known> eldest) {
                return size() > capacity;
            }
        };
    }

    private Known of(String path) {
        Known k = known.get(path);
        return k == null ? Known.NONE : k;
    }

    /** @return true if {@code path} was last seen to exist */
    public synchronized boolean exists(String path) {
        return of(path).exists();
    }

    /**
     * @return true if a create in {@code path} should assume it exists: seen to exist, or removed
     *     by this client last while other clients use it too (they make it again; a key that only
     *     this client uses is assumed gone after its removal, and made in the node's transaction)
     */
    public synchronized boolean likelyExists(String path) {
        Known k = of(path);
        return k.exists() || (k.shared() && k.removedByUs());
    }

    /**
     * A grant whose view of the queue in {@code path} showed no node but its own: may its release
     * try to remove the directory with its node? Only if last seen to exist with the library's
     * mark, not a hot key of this client, and not contended for it ({@link Contention}).
     *
     * @param freshRead true if the grant was decided on the read just recorded ({@link #saw}),
     *     false if on an older read and a watch that saw the one node ahead go (a stale view):
     *     a fresh read is also the probe that can end the contended mark
     * @return true if the release may try the removal
     */
    public synchronized boolean removableOnGrant(String path, boolean freshRead) {
        Known k = known.get(path);
        if (k == null) {
            return false;
        }
        if (freshRead) {
            k = k.with(k.contention().grantedAlone());
            known.put(path, k);
        }
        return k.ours() && k.contention().mayRemove();
    }

    /**
     * @return true if an acquisition that ends without a grant, last in {@code path} as far as it
     *     saw, may try to remove the directory: as {@link #removableOnGrant}, without a probe
     */
    public synchronized boolean removableOnLeave(String path) {
        Known k = of(path);
        return k.ours() && k.contention().mayRemove();
    }

    /**
     * Records that a removal of {@code path} was refused ({@code NOTEMPTY}), or that the read a
     * release sends before its removal found another node: another client queued in it (see
     * {@link #sawShared}), and it is contended for this client ({@link Contention}).
     */
    public synchronized void refused(String path) {
        Known k = of(path);
        known.put(path, new Known(k.exists(), k.libraryMade(), true, k.removedByUs(), k.remakes(),
                k.contention().refused()));
    }

    /**
     * @return true if a directory's stat carries the library's mark: made and its data set again
     *     in one transaction (data version 1, last modified by the transaction that made it)
     */
    public static boolean isLibraryMark(int version, long czxid, long mzxid) {
        return version == 1 && mzxid == czxid;
    }

    /** Records that {@code path} exists (its stat not seen); what is known of it already is kept. */
    public synchronized void sawExisting(String path) {
        Known k = of(path);
        if (!k.exists()) {
            known.put(path, k.existing(false));
        }
    }

    /**
     * Records that {@code path} exists with the stat read: its czxid (its lifetime), whether it
     * carries the library's mark ({@link #isLibraryMark}), and its child version (for {@link
     * Contention}).
     */
    public synchronized void saw(String path, long czxid, boolean libraryMade, int cversion) {
        Known k = of(path);
        known.put(path, k.existing(libraryMade).with(k.contention().read(czxid, cversion)));
    }

    /**
     * Records that this client made {@code path} (with the library's mark).
     *
     * @param czxid the directory's czxid, or 0 if not known
     */
    public synchronized void sawMade(String path, long czxid) {
        Known k = of(path);
        known.put(path, new Known(true, true, k.shared(), false, k.remakes() + (k.removedByUs() ? 1 : 0),
                Contention.made(czxid)));
    }

    /**
     * Records that this client has sent the transaction that makes {@code path}, for the attempt
     * {@code attempt}: until it is answered ({@link #makingAnswered}), the client's other creates
     * in that directory wait for it ({@link #waitForMaking}), so that they are sent in the order
     * they were asked for, behind it (and behind its own create, sent again if the directory
     * existed after all).
     */
    public void makingStarted(String path, String attempt) {
        synchronized (making) {
            making.putIfAbsent(path, new Gate(attempt));
        }
    }

    /**
     * @param then sends a create in {@code path} for {@code attempt}
     * @return true if {@code then} will run once the transaction making {@code path} is answered
     *     (first, if it is that transaction's own attempt); false if none is on its way: send now
     */
    public boolean waitForMaking(String path, String attempt, Runnable then) {
        synchronized (making) {
            Gate g = making.get(path);
            if (g == null || g.drainer == Thread.currentThread()) {
                return false; // none on its way, or this is a waiting create being sent now
            }
            if (g.owner.equals(attempt)) {
                g.waiting.addFirst(then);
            } else {
                g.waiting.addLast(then);
            }
            return true;
        }
    }

    /** The transaction making {@code path} was answered: runs the creates that waited for it, in order. */
    public void makingAnswered(String path) {
        Gate g;
        synchronized (making) {
            g = making.get(path);
            if (g == null) {
                return;
            }
            g.drainer = Thread.currentThread();
        }
        // The gate stays until every waiting create is sent: a create asked for meanwhile on
        // another thread queues behind them rather than overtaking them.
        for (;;) {
            Runnable next;
            synchronized (making) {
                next = g.waiting.pollFirst();
                if (next == null) {
                    making.remove(path);
                    return;
                }
            }
            next.run();
        }
    }

    /** Records that another client uses {@code path} too (see {@link #likelyExists}). */
    public synchronized void sawShared(String path) {
        Known k = of(path);
        known.put(path, new Known(k.exists(), k.libraryMade(), true, k.removedByUs(), k.remakes(), k.contention()));
    }

    /** Records that this client removed {@code path}. */
    public synchronized void removed(String path) {
        known.put(path, of(path).gone(true));
    }

    /** Records that {@code path} is gone (a NONODE): the next create makes it. */
    public synchronized void sawGone(String path) {
        Known k = known.get(path);
        if (k != null) {
            known.put(path, k.gone(false));
        }
    }

    /**
     * An acquisition of this client started in {@code path}: until it ends ({@link #acquisitionEnded}),
     * its node is, or soon will be, in the directory, and no release or leave of this client
     * tries to remove it ({@link #acquiring}). Any lock object of the client counts, not only the
     * releaser's: two lock objects on one key in one service would otherwise have the first's
     * release refused by the second's node, and the refusal mark the directory contended for the
     * client, so that the second, the last holder, would keep it.
     */
    public void acquisitionStarted(String path) {
        running.merge(path, 1, Integer::sum);
    }

    /** An acquisition of this client in {@code path} ended, held or not (once per {@link #acquisitionStarted}). */
    public void acquisitionEnded(String path) {
        running.computeIfPresent(path, (p, n) -> n == 1 ? null : n - 1);
    }

    /** @return true while an acquisition of this client runs in {@code path} */
    public boolean acquiring(String path) {
        return running.containsKey(path);
    }

    /** @return how many directories are remembered now */
    public synchronized int size() {
        return known.size();
    }
}
