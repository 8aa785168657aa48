package io.zkcoord.value;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.once.Change;
import io.zkcoord.once.NodeState;
import io.zkcoord.once.OnceWriter;
import io.zkcoord.once.OnceWriters;
import io.zkcoord.once.Outcome;
import io.zkcoord.once.PathWatches;
import io.zkcoord.queue.QueuePaths;
import io.zkcoord.queue.Waits;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A value every process sees and may change, with a listener: one node, watched.
 *
 * <pre>{@code
 * try (ZkSharedValue<Integer> limit = ZkSharedValue.ofInt(client, "/config/limit", 100)) {
 *     limit.start();                                    // made with 100 if missing
 *     limit.addListener(v -> log.info("limit now {}", v.value()));
 *     Versioned<Integer> seen = limit.get();
 *     boolean raised = limit.trySet(seen, seen.value() + 10); // only if nobody changed it since
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Formats.</b> {@link #ofInt} keeps 4 bytes big-endian (Curator's {@code SharedCount}),
 *       {@link #ofLong} 8 bytes big-endian (Curator's {@code DistributedAtomicLong}), {@link
 *       #ofBytes} the bytes as given. Curator's recipes on the same path see these writes and
 *       this object sees theirs.
 *   <li><b>Newest seen.</b> {@link #get()} is the newest value this object has seen, by the
 *       ensemble's order of writes (the node's {@code mzxid}), never by the version, which wraps
 *       past {@link Integer#MAX_VALUE}: the value keeps updating after 2^31 writes.
 *   <li><b>One watch.</b> The object holds one watch on the node, set again after every change
 *       and after every reconnection (reading the node again, so a change made while it was cut
 *       off is seen). {@link #close()} removes it from the server (unless another shared value
 *       of the same client still watches the node).
 *   <li><b>Exactly once.</b> {@link #set} and a {@code true} from {@link #trySet} were applied
 *       exactly once, even when their reply was lost (as {@link ZkAtomicLong}).
 *   <li><b>Versions.</b> {@link #trySet} writes only if the node's version is still the one of
 *       {@code previous}, and never sends version -1 (ZooKeeper's "any version"): given a {@code
 *       previous} of version -1 it returns false without writing.
 *   <li><b>Listeners</b> are told each newer value seen, in order, on a library thread (never
 *       ZooKeeper's); what one throws is logged.
 * </ul>
 * If the node is deleted, {@link #get()} keeps the last value seen, and the object watches for
 * the node to come back; {@link #set} makes it again.
 *
 * <p>Failures: {@link io.zkcoord.CommitOutcomeUnknownException} and {@link CoordinationException}
 * as for {@link ZkAtomicLong}; {@link IllegalStateException} before {@link #start()}, after
 * {@link #close()}, or once the client is closed.
 *
 * <p>Thread-safe.
 *
 * @param <T> the value's type
 */
public final class ZkSharedValue<T> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkSharedValue.class);

    private enum State { NEW, STARTED, CLOSED }

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final Codec<T> codec;
    private final byte[] seed;
    private final OnceWriter writer;
    private final CopyOnWriteArraySet<Consumer<Versioned<T>>> listeners = new CopyOnWriteArraySet<>();
    private final Watcher watcher = this::watched;
    private final ConnectionListener reconnect = this::connectionChanged;

    // Guarded by this.
    private State state = State.NEW;
    private NodeState seen;
    private Versioned<T> current;

    private ZkSharedValue(ZkClient client, String path, Codec<T> codec, T seed) {
        this.path = QueuePaths.validate("shared value", path);
        this.services = ClientServices.of(client);
        if (seed == null) {
            throw new IllegalArgumentException("seed must not be null");
        }
        this.client = client;
        this.codec = codec;
        this.seed = codec.encode(seed);
        this.writer = OnceWriters.of(client, path);
    }

    /**
     * A value of any bytes.
     *
     * @param client the client
     * @param path the value's node
     * @param seed the value {@link #start()} gives a missing node (copied)
     * @return the value, not started
     * @throws IllegalArgumentException if an argument is null or the path is invalid
     */
    public static ZkSharedValue<byte[]> ofBytes(ZkClient client, String path, byte[] seed) {
        return new ZkSharedValue<>(client, path, Codec.BYTES, seed);
    }

    /**
     * An int of 4 bytes, big-endian: the format of Curator's {@code SharedCount}.
     *
     * @param client the client
     * @param path the value's node
     * @param seed the value {@link #start()} gives a missing node
     * @return the value, not started
     * @throws IllegalArgumentException if an argument is null or the path is invalid
     */
    public static ZkSharedValue<Integer> ofInt(ZkClient client, String path, int seed) {
        return new ZkSharedValue<>(client, path, Codec.INT, seed);
    }

    /**
     * A long of 8 bytes, big-endian: the format of Curator's {@code DistributedAtomicLong} and of
     * {@link ZkAtomicLong}.
     *
     * @param client the client
     * @param path the value's node
     * @param seed the value {@link #start()} gives a missing node
     * @return the value, not started
     * @throws IllegalArgumentException if an argument is null or the path is invalid
     */
    public static ZkSharedValue<Long> ofLong(ZkClient client, String path, long seed) {
        return new ZkSharedValue<>(client, path, Codec.LONG, seed);
    }

    /**
     * Makes the node with the seed if it is missing (its parents too), reads it and watches it.
     * Blocks for a few round trips, bounded by the client's retry policy.
     *
     * @throws IllegalStateException if already started or closed, or the client is closed
     * @throws CoordinationException if the retry policy gives up, or the node holds data this
     *     value cannot decode
     */
    public void start() {
        synchronized (this) {
            if (state != State.NEW) {
                throw new IllegalStateException("shared value " + path + " is " + state.name().toLowerCase()
                        + "; start() once");
            }
            state = State.STARTED;
        }
        Waits.uninterruptibly(writer.submit(ValueRule.seed(seed)));
        PathWatches.of(services).join(path);
        NodeState read = readWatching();
        if (read.exists()) {
            codec.decode(path, read.data()); // undecodable data fails start(), not a later get()
        }
        client.addConnectionListener(reconnect);
    }

    /**
     * @return the newest value seen, with its node's version
     * @throws IllegalStateException before {@link #start()}
     */
    public synchronized Versioned<T> get() {
        if (state == State.NEW) {
            throw new IllegalStateException("shared value " + path + " is not started");
        }
        return current;
    }

    /**
     * Writes {@code value} whatever the node holds (making it if missing), exactly once. On return
     * {@link #get()} shows it, or a newer value.
     *
     * @param value the new value
     * @throws IllegalArgumentException if {@code value} is null
     * @throws IllegalStateException if not started, or closed
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws CoordinationException see the class comment
     */
    public void set(T value) {
        write(ValueRule.set(encode(value)));
    }

    /**
     * Writes {@code value} only if the node is unchanged since {@code previous} was read (same
     * version, and the same value at that version), exactly once.
     *
     * @param previous a value this object returned (its version is what counts)
     * @param value the new value
     * @return true if written; false if the node changed since {@code previous}, is missing,
     *     held another value than {@code previous}'s at its version, or {@code previous} has
     *     version -1 (nothing written). After false, {@link #get()} shows the
     *     value that was read.
     * @throws IllegalArgumentException if an argument is null
     * @throws IllegalStateException if not started, or closed
     * @throws io.zkcoord.CommitOutcomeUnknownException see the class comment
     * @throws CoordinationException see the class comment
     */
    public boolean trySet(Versioned<T> previous, T value) {
        if (previous == null || previous.value() == null) {
            throw new IllegalArgumentException("previous must not be null, nor its value");
        }
        T was = previous.value();
        return write(ValueRule.trySet(previous.version(), data -> holds(data, was), encode(value)));
    }

    /** @return whether {@code data} is {@code value} in this value's format (undecodable data is not) */
    private boolean holds(byte[] data, T value) {
        try {
            return Objects.deepEquals(codec.decode(path, data), value);
        } catch (CoordinationException e) {
            return false;
        }
    }

    /**
     * Adds a listener, told every newer value seen from now on. Adding it twice adds it once.
     *
     * @param listener the listener
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(Consumer<Versioned<T>> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        listeners.add(listener);
    }

    /**
     * Removes a listener; nothing if it was not added.
     *
     * @param listener the listener
     */
    public void removeListener(Consumer<Versioned<T>> listener) {
        listeners.remove(listener);
    }

    /**
     * Stops watching (the watch is removed from the server when connected) and drops the
     * listeners. Idempotent; {@link #get()} still returns the last value seen.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (state == State.CLOSED) {
                return;
            }
            boolean started = state == State.STARTED;
            state = State.CLOSED;
            if (!started) {
                return;
            }
        }
        listeners.clear();
        client.removeConnectionListener(reconnect);
        ZooKeeper zk = null;
        try {
            zk = client.zooKeeper();
        } catch (RuntimeException e) {
            // closed: the watch went with the session
        }
        PathWatches.of(services).leave(zk, path, watcher, true, () -> { });
    }

    private byte[] encode(T value) {
        if (value == null) {
            throw new IllegalArgumentException("value must not be null");
        }
        return codec.encode(value);
    }

    private boolean write(Change<Boolean> change) {
        synchronized (this) {
            if (state != State.STARTED) {
                throw new IllegalStateException("shared value " + path + " is " + state.name().toLowerCase());
            }
        }
        Outcome<Boolean> outcome = Waits.uninterruptibly(writer.submit(change));
        NodeState after = outcome.after();
        if (after != null && after.exists() && after.mzxid() != 0) {
            saw(after);
        } else {
            readNow(); // made by this write: its zxids are known only by reading
        }
        return outcome.result();
    }

    /** Reads the node and sets the watch, under the retry policy; tells what it read. */
    private NodeState readWatching() {
        try {
            NodeState read = client.call(path, zk -> {
                Stat stat = new Stat();
                try {
                    return NodeState.of(zk.getData(path, watcher, stat), stat);
                } catch (KeeperException.NoNodeException e) {
                    return zk.exists(path, watcher) == null ? NodeState.MISSING : null;
                }
            });
            if (read == null) {
                return readWatching(); // made between the two calls
            }
            saw(read);
            return read;
        } catch (KeeperException e) {
            throw new CoordinationException("cannot read " + path + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while reading " + path, e);
        }
    }

    private void readNow() {
        try {
            NodeState read = client.call(path, zk -> {
                Stat stat = new Stat();
                try {
                    return NodeState.of(zk.getData(path, false, stat), stat);
                } catch (KeeperException.NoNodeException e) {
                    return NodeState.MISSING;
                }
            });
            saw(read);
        } catch (KeeperException e) {
            throw new CoordinationException("cannot read " + path + ": " + e.code(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while reading " + path, e);
        }
    }

    /** The watch fired: read again, setting it again. */
    private void watched(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            refresh();
        }
    }

    private void connectionChanged(ConnectionState connection) {
        if (connection == ConnectionState.RECONNECTED) {
            refresh(); // a new session has no watch; the same one may have missed nothing, but a read is cheap
        }
    }

    /** Asynchronously reads the node and sets the watch again. */
    private void refresh() {
        synchronized (this) {
            if (state != State.STARTED) {
                return;
            }
        }
        ZooKeeper zk;
        try {
            zk = client.zooKeeper();
        } catch (RuntimeException e) {
            return; // closed
        }
        zk.getData(path, watcher, (rc, p, ctx, data, stat) -> {
            Code code = Code.get(rc);
            if (code == Code.OK) {
                saw(NodeState.of(data, stat));
            } else if (code == Code.NONODE) {
                zk.exists(path, watcher, (rc2, p2, ctx2, stat2) -> {
                    if (Code.get(rc2) == Code.OK) {
                        refresh(); // made again meanwhile
                    }
                }, null);
            } else {
                log.debug("{}: re-reading failed ({}); read again at the next reconnection", path, code);
            }
        }, null);
    }

    /** Takes {@code state} if it is newer than what was seen, and tells the listeners. */
    private void saw(NodeState state) {
        Versioned<T> told;
        synchronized (this) {
            if (!ValueRule.replaces(seen, state)) {
                return;
            }
            T value;
            try {
                value = codec.decode(path, state.data());
            } catch (CoordinationException e) {
                log.error("{}: ignoring data this value cannot decode: {}", path, e.getMessage());
                return;
            }
            seen = state;
            current = new Versioned<>(value, state.version());
            told = current;
        }
        for (Consumer<Versioned<T>> listener : listeners) {
            services.userCallbacks().execute(() -> {
                try {
                    listener.accept(told);
                } catch (RuntimeException e) {
                    log.error("{}: a listener failed", path, e);
                }
            });
        }
    }

    @Override
    public String toString() {
        return "ZkSharedValue[" + path + "]";
    }
}
