package io.zkcoord.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one client has seen of the directories its recipes queue in: which exist, and which of
 * them are {@code CONTAINER} nodes. A hint, never a promise: another client may delete or make a
 * directory at any moment, and every use of a hint survives it being wrong (a create that fails
 * teaches the truth, at the cost of one round trip).
 *
 * <p>Bounded: the {@value #DEFAULT_CAPACITY} directories used last are remembered, the others
 * forgotten, so a service that locks a new key every time (one lock per order id) holds no memory
 * for keys it never uses again. A forgotten directory is merely unknown.
 *
 * <p>Thread-safe: every method takes the object's monitor, briefly.
 */
public final class KnownDirectories {

    /** How many directories a client remembers unless told otherwise. */
    public static final int DEFAULT_CAPACITY = 4096;

    /** What is known of one directory. */
    public enum Known {
        /** Seen to exist; its mode is not known (or it is not a container). */
        EXISTS,
        /** Seen to exist as a {@code CONTAINER} node: the library made it, and may remove it. */
        CONTAINER
    }

    private final Map<String, Known> known;

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

    /** @return what is known of {@code path}, or null if nothing (never seen, forgotten, or seen gone) */
    public synchronized Known get(String path) {
        return known.get(path);
    }

    /** @return true if {@code path} was last seen to exist */
    public synchronized boolean exists(String path) {
        return known.get(path) != null;
    }

    /**
     * Records that {@code path} exists; a mode known already is kept ({@code EXISTS} says less
     * than {@code CONTAINER}, not something else).
     */
    public synchronized void sawExisting(String path) {
        known.putIfAbsent(path, Known.EXISTS);
        known.get(path); // touch: the most recently used
    }

    /** Records that {@code path} exists and whether it is a {@code CONTAINER} node (read from its stat). */
    public synchronized void saw(String path, boolean container) {
        known.put(path, container ? Known.CONTAINER : Known.EXISTS);
    }

    /** Records that {@code path} is gone (a NONODE, or this client deleted it). */
    public synchronized void sawGone(String path) {
        known.remove(path);
    }

    /** @return how many directories are remembered now */
    public synchronized int size() {
        return known.size();
    }
}
