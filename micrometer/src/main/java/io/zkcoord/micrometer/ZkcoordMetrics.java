package io.zkcoord.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.observe.WaitOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Micrometer meters for the locks, leases, permits and leaderships of one {@link ZkClient}.
 *
 * <pre>{@code
 * ZkcoordMetrics metrics = ZkcoordMetrics.builder(client)
 *         .pathTag(path -> path.replaceAll("/orders/\\d+$", "/orders/{id}"))   // optional
 *         .maxPaths(200)                                                       // optional
 *         .build();
 * metrics.bindTo(registry);
 * }</pre>
 *
 * <h2>Meters</h2>
 * <table>
 *   <caption>Meters, all tagged with the builder's common tags</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code zkcoord.lock.wait}</td><td>timer</td><td>path, recipe, outcome</td>
 *       <td>every acquisition, from the call to its end; outcome {@code granted}, {@code timed_out},
 *       {@code abandoned} or {@code failed}</td></tr>
 *   <tr><td>{@code zkcoord.lock.hold}</td><td>timer</td><td>path, recipe, outcome</td>
 *       <td>every hold, from its grant to its end; outcome {@code released} or {@code lost}</td></tr>
 *   <tr><td>{@code zkcoord.lock.timeouts}</td><td>counter</td><td>path, recipe</td>
 *       <td>acquisitions whose time ran out ({@code tryLock(time)}, {@code tryAcquire}, a one-look {@code tryLock()})</td></tr>
 *   <tr><td>{@code zkcoord.lock.losses}</td><td>counter</td><td>path, recipe</td>
 *       <td>holds lost with their session</td></tr>
 *   <tr><td>{@code zkcoord.session.state}</td><td>gauge</td><td>state</td>
 *       <td>1 for the client's current {@link ConnectionState} ({@code connected}, {@code suspended},
 *       {@code reconnected}, {@code lost}, {@code closed}), 0 for the others</td></tr>
 *   <tr><td>{@code zkcoord.session.transitions}</td><td>counter</td><td>state</td>
 *       <td>transitions into each state since binding (a short {@code lost} a gauge could miss)</td></tr>
 * </table>
 * {@code recipe} is {@code mutex}, {@code read}, {@code write}, {@code semaphore}, {@code election} or
 * {@code multi}. A wait or hold of a multi-path lock is recorded once under each of its paths.
 *
 * <h2>Tag cardinality</h2>
 * Every distinct lock path is a distinct time series. Applications that lock one path per entity
 * ({@code /locks/orders/4711}) should map paths to a few tag values with {@link
 * Builder#pathTag(Function)}. Whatever the mapping, at most {@link Builder#maxPaths(int)} distinct
 * {@code path} tag values are used (default {@value #DEFAULT_MAX_PATHS}); the paths seen after that
 * are all tagged {@value #OTHER}. Micrometer's own {@code MeterFilter.maximumAllowableTags} is an
 * alternative for a whole registry.
 *
 * <h2>Threads</h2>
 * Thread-safe. Meters are updated on the threads that acquire and release (see {@link
 * CoordinationListener}); each update is a few map look-ups, it never blocks.
 */
public final class ZkcoordMetrics implements MeterBinder, AutoCloseable {

    /** The {@code path} tag of the paths beyond {@link Builder#maxPaths(int)}. */
    public static final String OTHER = "other";
    /** How many distinct path tags are used unless {@link Builder#maxPaths(int)} says otherwise. */
    public static final int DEFAULT_MAX_PATHS = 100;

    private final ZkClient client;
    private final Function<String, String> pathTag;
    private final int maxPaths;
    private final Tags tags;
    /** The distinct tag values in use, at most {@link #maxPaths}. */
    private final Set<String> tagValues = ConcurrentHashMap.newKeySet();
    private final List<CoordinationListener> bound = new CopyOnWriteArrayList<>();

    private ZkcoordMetrics(Builder b) {
        this.client = b.client;
        this.pathTag = b.pathTag;
        this.maxPaths = b.maxPaths;
        this.tags = b.tags;
    }

    /**
     * @param client the client whose recipes are measured
     * @return a builder with the defaults: path tags are the paths, at most {@value #DEFAULT_MAX_PATHS}
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static Builder builder(ZkClient client) {
        return new Builder(client);
    }

    /**
     * Registers the meters with {@code registry} and starts updating them. May be called for several
     * registries.
     *
     * @throws IllegalArgumentException if {@code registry} is null
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        for (ConnectionState s : ConnectionState.values()) {
            Gauge.builder("zkcoord.session.state", client, c -> c.state() == s ? 1 : 0)
                    .tags(tags).tag("state", lower(s.name()))
                    .description("1 for the ZooKeeper client's current session state, 0 for the others")
                    .register(registry);
        }
        CoordinationListener listener = new Recorder(registry);
        client.addCoordinationListener(listener);
        bound.add(listener);
    }

    /** Stops updating the meters (they stay registered, with their last values). Idempotent. */
    @Override
    public void close() {
        for (CoordinationListener l : bound) {
            client.removeCoordinationListener(l);
        }
        bound.clear();
    }

    /**
     * @return the {@code path} tag of {@code path}: mapped, or {@value #OTHER} past the limit. Keeps no
     *     state per path (locks per entity could make millions), only the at most {@link #maxPaths} tag values.
     */
    String tagOf(String path) {
        String mapped = pathTag.apply(path);
        if (mapped == null) {
            return OTHER;
        }
        if (tagValues.contains(mapped)) {
            return mapped;
        }
        synchronized (tagValues) {
            if (tagValues.size() < maxPaths) {
                tagValues.add(mapped);
                return mapped;
            }
        }
        return OTHER;
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    /** Updates one registry's meters. */
    private final class Recorder implements CoordinationListener {

        private final MeterRegistry registry;

        Recorder(MeterRegistry registry) {
            this.registry = registry;
        }

        @Override
        public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
            waited(event, waited, WaitOutcome.GRANTED);
        }

        @Override
        public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
            waited(event, waited, outcome);
            if (outcome == WaitOutcome.TIMED_OUT) {
                for (String path : event.paths()) {
                    Counter.builder("zkcoord.lock.timeouts").tags(tags).tags(lockTags(event, path))
                            .description("zkcoord acquisitions whose time ran out").register(registry).increment();
                }
            }
        }

        @Override
        public void released(CoordinationEvent event, Duration held, long fencingToken) {
            held(event, held, "released");
        }

        @Override
        public void lost(CoordinationEvent event, Duration held, long fencingToken) {
            held(event, held, "lost");
            for (String path : event.paths()) {
                Counter.builder("zkcoord.lock.losses").tags(tags).tags(lockTags(event, path))
                        .description("zkcoord holds lost with their ZooKeeper session").register(registry).increment();
            }
        }

        @Override
        public void sessionStateChanged(ConnectionState state) {
            Counter.builder("zkcoord.session.transitions").tags(tags).tag("state", lower(state.name()))
                    .description("ZooKeeper session state transitions").register(registry).increment();
        }

        private void waited(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
            for (String path : event.paths()) {
                Timer.builder("zkcoord.lock.wait").tags(tags).tags(lockTags(event, path)).tag("outcome", outcome.tag())
                        .description("Waits for zkcoord locks, leases, permits and leaderships")
                        .register(registry).record(waited);
            }
        }

        private void held(CoordinationEvent event, Duration held, String outcome) {
            for (String path : event.paths()) {
                Timer.builder("zkcoord.lock.hold").tags(tags).tags(lockTags(event, path)).tag("outcome", outcome)
                        .description("Holds of zkcoord locks, leases, permits and leaderships")
                        .register(registry).record(held);
            }
        }

        private Tags lockTags(CoordinationEvent event, String path) {
            return Tags.of("path", tagOf(path), "recipe", event.recipe().tag());
        }
    }

    /**
     * Settings of a {@link ZkcoordMetrics}. Every setter checks its argument at once ({@link
     * IllegalArgumentException}). Not thread-safe; use from one thread.
     */
    public static final class Builder {

        private final ZkClient client;
        private Function<String, String> pathTag = Function.identity();
        private int maxPaths = DEFAULT_MAX_PATHS;
        private Tags tags = Tags.empty();

        private Builder(ZkClient client) {
            if (client == null) {
                throw new IllegalArgumentException("client must not be null");
            }
            this.client = client;
        }

        /**
         * @param pathTag maps a lock path to its {@code path} tag value, e.g. {@code /locks/orders/4711}
         *     to {@code /locks/orders/{id}}; called on every wait and hold, so it must be quick; a null
         *     result counts as {@value ZkcoordMetrics#OTHER}. Default: the path itself.
         */
        public Builder pathTag(Function<String, String> pathTag) {
            if (pathTag == null) {
                throw new IllegalArgumentException("pathTag must not be null");
            }
            this.pathTag = pathTag;
            return this;
        }

        /**
         * @param maxPaths how many distinct {@code path} tag values to use at most; later ones are all
         *     {@value ZkcoordMetrics#OTHER}. At least 1; default {@value ZkcoordMetrics#DEFAULT_MAX_PATHS}.
         */
        public Builder maxPaths(int maxPaths) {
            if (maxPaths < 1) {
                throw new IllegalArgumentException("maxPaths must be at least 1, was " + maxPaths);
            }
            this.maxPaths = maxPaths;
            return this;
        }

        /** @param tags tags added to every meter, e.g. {@code Tags.of("ensemble", "orders")}. Default none. */
        public Builder tags(Iterable<Tag> tags) {
            if (tags == null) {
                throw new IllegalArgumentException("tags must not be null");
            }
            this.tags = Tags.of(tags);
            return this;
        }

        /** @return the binder; nothing is measured until {@link ZkcoordMetrics#bindTo} */
        public ZkcoordMetrics build() {
            return new ZkcoordMetrics(this);
        }
    }
}
