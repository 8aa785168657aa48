package io.zkcoord.internal;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.retry.RetryPolicy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.zookeeper.data.ACL;

/**
 * What the recipes need of a {@link ZkClient} beyond its public face: the next live session as a
 * future, a scheduler for retry delays, and an executor for user code (futures, listeners) that is
 * never ZooKeeper's event thread. Internal: this package is not exported by the module.
 *
 * <p>Thread-safe; immutable apart from what it points to and the state kept with {@link #shared}.
 */
public final class ClientServices {

    private static volatile Function<ZkClient, ClientServices> access;

    private final String name;
    private final Supplier<CompletableFuture<ZkSession>> session;
    private final Supplier<CompletableFuture<ZkSession>> sessionUnlessRefused;
    private final ScheduledExecutorService scheduler;
    private final Executor userCallbacks;
    private final RetryPolicy retryPolicy;
    private final List<ACL> acl;
    private final Function<String, List<ACL>> aclForPath;
    private final Supplier<Boolean> closed;
    private final String chroot;
    private final Supplier<Boolean> connected;
    private final Observer observer;
    /** State other packages keep per client ({@link #shared}), by its type. */
    private final ConcurrentHashMap<Class<?>, Object> shared = new ConcurrentHashMap<>();
    private final KnownDirectories knownDirectories = new KnownDirectories(KnownDirectories.DEFAULT_CAPACITY);

    /**
     * @param name the client's name, for thread names and messages
     * @param session the live session at once if there is one, else a future completed when one is
     *     established, or exceptionally with {@link IllegalStateException} once the client closes
     * @param sessionUnlessRefused as {@code session}, but also completed exceptionally with a
     *     {@link io.zkcoord.TlsConnectException} while every server refuses the client's TLS for good
     * @param scheduler runs short, non-blocking steps after a delay
     * @param userCallbacks runs user code: completions of futures handed to users, listeners
     * @param retryPolicy the client's retry policy
     * @param acl the ACL of every node the recipes create, or null if each path has its own
     * @param aclForPath the ACL of a node by its path (as the client names it, without the chroot)
     * @param closed whether the client is closed
     * @param chroot the connect string's chroot, or empty
     * @param connected whether the client is connected now (CONNECTED or RECONNECTED)
     * @param observer reports the recipes' waits and holds
     */
    public ClientServices(String name, Supplier<CompletableFuture<ZkSession>> session,
            Supplier<CompletableFuture<ZkSession>> sessionUnlessRefused, ScheduledExecutorService scheduler,
            Executor userCallbacks, RetryPolicy retryPolicy, List<ACL> acl, Function<String, List<ACL>> aclForPath,
            Supplier<Boolean> closed, String chroot, Supplier<Boolean> connected, Observer observer) {
        this.name = name;
        this.session = session;
        this.sessionUnlessRefused = sessionUnlessRefused;
        this.scheduler = scheduler;
        this.userCallbacks = userCallbacks;
        this.retryPolicy = retryPolicy;
        this.acl = acl;
        this.aclForPath = aclForPath;
        this.closed = closed;
        this.chroot = chroot;
        this.connected = connected;
        this.observer = observer;
    }

    /** Called once, by {@link ZkClient}'s class initialiser. */
    public static void provide(Function<ZkClient, ClientServices> accessor) {
        if (access != null) {
            throw new IllegalStateException("already provided");
        }
        access = accessor;
    }

    /**
     * @return the services of {@code client}
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static ClientServices of(ZkClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        return access.apply(client);
    }

    /**
     * For work that must go on in whatever session comes next (a group member joining again, a
     * watch set again): it waits through every outage.
     *
     * @return a future of the live session; see the constructor
     */
    public CompletableFuture<ZkSession> session() {
        return session.get();
    }

    /**
     * For an acquisition waiting for a session: as {@link #session()}, but failed at once with a
     * {@link io.zkcoord.TlsConnectException} while every server refuses the client's TLS in a way
     * that retrying cannot change (an untrusted certificate, a plain-text port, ...), instead of
     * waiting out the acquisition's time limit. The client keeps trying meanwhile.
     *
     * @return a future of the live session; see the constructor
     */
    public CompletableFuture<ZkSession> sessionUnlessRefused() {
        return sessionUnlessRefused.get();
    }

    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    public Executor userCallbacks() {
        return userCallbacks;
    }

    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /**
     * @return the one ACL of every node, for a client built with {@code acl(..)} or the default
     * @throws IllegalStateException if the client was built with an {@code aclProvider}: each
     *     path has its own ACL then, ask {@link #aclFor(String)}
     */
    public List<ACL> acl() {
        if (acl == null) {
            throw new IllegalStateException(name + " gives each path its own ACL (aclProvider): ask aclFor(path)");
        }
        return acl;
    }

    /**
     * The ACL to create a node with. Every node a recipe creates asks here: directories and their
     * missing parents with their own path, queue nodes with the path their {@code create} names
     * (the directory, {@code /}, the node's name up to the sequence number ZooKeeper appends).
     *
     * @param path the node's path as the client names it: relative to the chroot, if any
     * @return the ACL, an unmodifiable list ZooKeeper accepts
     * @throws IllegalStateException if the client's aclProvider gave no usable ACL for the path
     */
    public List<ACL> aclFor(String path) {
        return aclForPath.apply(path);
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** @return true while the client is connected (a reply can come soon) */
    public boolean isConnected() {
        return connected.get();
    }

    /** @return the connect string's chroot ({@code /app}), or empty */
    public String chroot() {
        return chroot;
    }

    /** @return where the recipes report their waits and holds */
    public Observer observer() {
        return observer;
    }

    public String name() {
        return name;
    }

    /**
     * State that another package keeps once per client (the queue core's creates in flight and
     * watches, per session), so that it need not be passed around nor kept in a static map.
     *
     * @param type the state's type, which is also its key
     * @param make makes it, on first use; called at most once per client and type
     * @return this client's one instance of {@code type}
     */
    public <T> T shared(Class<T> type, Supplier<T> make) {
        return type.cast(shared.computeIfAbsent(type, k -> make.get()));
    }

    /** @return what this client has seen of its recipes' directories (bounded; a hint, see there) */
    public KnownDirectories knownDirectories() {
        return knownDirectories;
    }
}
