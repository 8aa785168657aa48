package io.zkcoord.test;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One or more real ZooKeeper servers in this JVM, with fault injection for the clients it makes.
 *
 * <pre>{@code
 * try (ZkTestEnsemble ensemble = ZkTestEnsemble.start(3)) {
 *     ZkClient client = ensemble.newClient();
 *     ZkMutex mutex = new ZkMutex(client, "/locks/orders");
 *     ZkLease lease = mutex.acquireLease(...);
 *     ensemble.expireSession(client);          // the session ends on the server
 *     assertTrue(lease.whenLost().isDone());
 * }
 * }</pre>
 *
 * <h2>Servers</h2>
 * Every server listens on a free loopback port and keeps its data in a fresh directory, deleted on {@link
 * #close()}. The servers' tick is 500 ms, so sessions may be from 1 s to 60 s long. Servers are numbered
 * from 0; {@link #connectString()} names them directly, in that order.
 *
 * <h2>Clients and faults</h2>
 * Every client the ensemble makes ({@link #newClient()}, or built from {@link #clientBuilder()}) connects
 * through a fault proxy of its own, one per server, so that a fault touches that client alone:
 * {@link #partition}, {@link #disconnect} and {@link #cutConnection}. The fault methods accept only such
 * clients and throw {@link IllegalArgumentException} for any other.
 *
 * <p>Thread-safe. Methods that wait (for a server, a leader, a session) do so with a deadline and say so.
 */
public final class ZkTestEnsemble implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ZkTestEnsemble.class);

    /** How long {@link #restartServer} and {@link #leader()} wait for a quorum before they give up. */
    static final Duration QUORUM_WAIT = Duration.ofSeconds(60);

    private final Servers servers;
    private final List<ClientLink> links = new CopyOnWriteArrayList<>();
    private final AtomicLong serials = new AtomicLong();
    private volatile boolean closed;

    private ZkTestEnsemble(Servers servers) {
        this.servers = servers;
    }

    /**
     * Starts {@code servers} ZooKeeper servers in this JVM and returns once they serve (for several, once
     * they have elected a leader).
     *
     * @param servers 1 (a standalone server) or an odd number from 3 to 9 (a quorum)
     * @return the running ensemble; close it when done
     * @throws IllegalArgumentException if {@code servers} is not 1 or an odd number from 3 to 9
     * @throws IllegalStateException if the servers cannot start (the cause says why); nothing is left running
     */
    public static ZkTestEnsemble start(int servers) {
        if (servers != 1 && (servers < 3 || servers > 9 || servers % 2 == 0)) {
            throw new IllegalArgumentException("servers must be 1 or an odd number from 3 to 9, was " + servers);
        }
        try {
            ZkTestEnsemble ensemble = new ZkTestEnsemble(Servers.start(servers));
            if (servers > 1) {
                ensemble.leader(); // returns once a quorum serves
            }
            return ensemble;
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot start " + servers + " ZooKeeper server(s)", e);
        }
    }

    /**
     * @return the servers' addresses, {@code 127.0.0.1:port,...} in index order, without any proxy: a client
     *     built on it is not subject to this ensemble's faults
     */
    public String connectString() {
        return servers.connectString();
    }

    /**
     * Makes a client that connects through a fault proxy of its own, and waits for its first session. The
     * client has {@link ZkClient}'s defaults otherwise (session timeout 10 s). It is closed with the
     * ensemble, and, under {@link ZkEnsemble}, after the test that made it.
     *
     * @return a connected client
     * @throws IllegalStateException if the ensemble is closed
     * @throws io.zkcoord.ConnectFailedException if no session comes within the connection timeout (15 s)
     */
    public ZkClient newClient() {
        ClientLink link = newLink(true);
        ZkClient client = ZkClient.builder().connectString(link.connectString()).build();
        link.client(client);
        return client;
    }

    /**
     * The same as {@link #newClient()}, to set more before {@code build()} or {@code start()}: a builder whose
     * connect string names a new fault proxy per server. A client built from it is subject to this ensemble's
     * faults, but it is the caller's to close (the ensemble only cuts it off when it closes); under {@link
     * ZkEnsemble}, a test that leaves one open fails.
     *
     * @return a builder with the connect string set
     * @throws IllegalStateException if the ensemble is closed
     */
    public ZkClient.Builder clientBuilder() {
        return ZkClient.builder().connectString(newLink(false).connectString());
    }

    /**
     * Expires the client's session on the server, as a real expiry would: the ensemble ends the session and
     * deletes its ephemeral nodes at once, the client hears {@link ConnectionState#LOST} (every lease of it
     * completes {@code whenLost()}), and it builds its next session. Returns once all of that happened, within
     * the session timeout + 2 s. If the client is cut off by a fault of this ensemble meanwhile, it returns
     * once the session has ended on the server: the client learns of it when healed.
     *
     * @param client a client of this ensemble, with a session
     * @throws IllegalArgumentException if {@code client} is not one of this ensemble's clients
     * @throws IllegalStateException if the client is closed or has no session, or the ensemble is closed
     * @throws AssertionError if the server still knows the session, or the client has not heard of the loss
     *     and built its next session, by the deadline; or if interrupted (the flag is set again)
     */
    public void expireSession(ZkClient client) {
        ClientLink link = linkOf(client);
        long old = client.sessionId();
        if (old == 0) {
            throw new IllegalStateException("the client has no session yet: " + client);
        }
        ZooKeeper zk = client.zooKeeper();
        long deadline = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(Math.max(zk.getSessionTimeout(), 1_000) + 2_000L);
        CountDownLatch lost = new CountDownLatch(1);
        ConnectionListener listener = state -> {
            if (state == ConnectionState.LOST) {
                lost.countDown();
            }
        };
        client.addConnectionListener(listener);
        try {
            SessionExpiry.expireOnServer(zk, servers.connectString(), remaining(deadline));
            LOG.debug("session 0x{} ended on the server", Long.toHexString(old));
            if (link.isFaulty()) {
                return; // the client hears of it when the fault heals
            }
            if (!lost.await(remaining(deadline).toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("session 0x" + Long.toHexString(old) + " ended on the server, but "
                        + client + " did not report LOST within its session timeout + 2 s");
            }
            if (!waitUntil(deadline, () -> client.isClosed()
                    || (client.state().isConnected() && client.sessionId() != 0 && client.sessionId() != old))) {
                throw new AssertionError("session 0x" + Long.toHexString(old) + " expired, but " + client
                        + " has no next session within its session timeout + 2 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while expiring session 0x" + Long.toHexString(old), e);
        } finally {
            if (!client.isClosed()) {
                client.removeConnectionListener(listener);
            }
        }
    }

    /**
     * A silent partition between {@code client} and every server: bytes are held both ways, connections stay
     * open, new connections are accepted but never answered, until {@link Fault#heal()}. As in production the
     * client goes {@code SUSPENDED} after its read timeout (2/3 of the session timeout), then {@code LOST}
     * once the session timeout has passed, while the servers expire the session. Calls with a time limit keep
     * it. Returns at once.
     *
     * @param client a client of this ensemble
     * @return the fault, to heal
     * @throws IllegalArgumentException if {@code client} is not one of this ensemble's clients
     * @throws IllegalStateException if the ensemble is closed
     */
    public Fault partition(ZkClient client) {
        ClientLink link = linkOf(client);
        link.stall();
        return link::heal;
    }

    /**
     * Makes every server unreachable to {@code client}: its connections are closed and every new one is reset
     * at once (as a refused connection), until {@link Fault#heal()}. The client goes {@code SUSPENDED} at once
     * and {@code LOST} after its session timeout. Returns at once.
     *
     * @param client a client of this ensemble
     * @return the fault, to heal
     * @throws IllegalArgumentException if {@code client} is not one of this ensemble's clients
     * @throws IllegalStateException if the ensemble is closed
     */
    public Fault disconnect(ZkClient client) {
        ClientLink link = linkOf(client);
        link.refuse();
        return link::heal;
    }

    /**
     * Resets the client's connections once: it sees a connection loss ({@code SUSPENDED}), reconnects at once
     * and keeps its session ({@code RECONNECTED}). Returns at once.
     *
     * @param client a client of this ensemble
     * @throws IllegalArgumentException if {@code client} is not one of this ensemble's clients
     * @throws IllegalStateException if the ensemble is closed
     */
    public void cutConnection(ZkClient client) {
        linkOf(client).cut();
    }

    /**
     * Stops server {@code index} (its data stays); its clients move to other servers. A quorum survives the
     * stop of a minority. Returns once the server is stopped. Stopping a stopped server does nothing.
     *
     * @param index the server, from 0
     * @throws IllegalArgumentException if there is no such server
     * @throws IllegalStateException if the ensemble is closed or the server did not stop
     */
    public void stopServer(int index) {
        checkIndex(index);
        try {
            servers.stop(index);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop server " + index, e);
        }
    }

    /**
     * Starts server {@code index} again on its data (a running one is stopped first), and returns once it
     * serves: for a quorum, once it has joined (a leader exists and every running server follows it), so that
     * {@link #leader()} is right at once. Waits at most 60 s.
     *
     * @param index the server, from 0
     * @throws IllegalArgumentException if there is no such server
     * @throws IllegalStateException if the ensemble is closed, or the server does not serve within 60 s
     */
    public void restartServer(int index) {
        checkIndex(index);
        try {
            servers.restart(index);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot restart server " + index, e);
        }
        leader();
    }

    /**
     * The index of the server that leads now (0 for a standalone server). Waits, at most 60 s, until the
     * running servers agree: one reports itself leader and every other running one follower, so the answer
     * is right just after an election or a restart.
     *
     * @return the leader's index, from 0
     * @throws IllegalStateException if the ensemble is closed, or no leader is agreed on within 60 s (too few
     *     servers running, say)
     */
    public int leader() {
        ensureOpen();
        long deadline = System.nanoTime() + QUORUM_WAIT.toNanos();
        int[] found = {-1};
        String[] last = {""};
        boolean agreed = waitUntilQuietly(deadline, () -> {
            List<String> modes = new ArrayList<>();
            int leader = -1;
            int leaders = 0;
            int others = 0;
            for (int i : servers.running()) {
                String mode = mode(i);
                modes.add(i + ":" + mode);
                if (mode.equals("leader") || mode.equals("standalone")) {
                    leader = i;
                    leaders++;
                } else if (!mode.equals("follower")) {
                    others++;
                }
            }
            last[0] = String.join(", ", modes);
            found[0] = leader;
            return leaders == 1 && others == 0;
        });
        if (!agreed) {
            throw new IllegalStateException("no leader agreed on within " + QUORUM_WAIT.toSeconds()
                    + " s; servers: " + last[0]);
        }
        return found[0];
    }

    /**
     * The watches the running servers hold now (data and child watches, each server's own count, summed over
     * the servers): for leak checks. A stopped server counts 0.
     *
     * @return the number of watches on the servers
     * @throws IllegalStateException if the ensemble is closed
     */
    public long serverWatchCount() {
        ensureOpen();
        long total = 0;
        for (int i : servers.running()) {
            total += servers.watchCount(i);
        }
        return total;
    }

    /**
     * Closes every client the ensemble made ({@link #newClient()}), cuts off those built from {@link
     * #clientBuilder()}, and stops the servers, deleting their data. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (ClientLink link : links) {
            closeQuietly(link);
        }
        links.clear();
        servers.close();
    }

    @Override
    public String toString() {
        return "ZkTestEnsemble[" + connectString() + (closed ? ", closed" : "") + "]";
    }

    // ---- for ZkEnsembleExtension ---------------------------------------------------------------------------

    /** The serial of the latest link: the links of what starts now have higher ones. */
    long mark() {
        return serials.get();
    }

    /** The links made after {@code mark}. */
    List<ClientLink> linksAfter(long mark) {
        return links.stream().filter(l -> l.serial() > mark).toList();
    }

    /** Closes the links made after {@code mark} (and the clients the ensemble made through them). */
    void closeLinksAfter(long mark) {
        for (ClientLink link : linksAfter(mark)) {
            closeQuietly(link);
            links.remove(link);
        }
    }

    /** Heals every fault and starts every stopped server again: the next test starts whole. */
    void restore() {
        links.forEach(ClientLink::heal);
        List<Integer> stopped = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            if (servers.isStopped(i)) {
                stopped.add(i);
            }
        }
        for (int i : stopped) {
            restartServer(i);
        }
    }

    boolean isClosed() {
        return closed;
    }

    // ---- internals -----------------------------------------------------------------------------------------

    private ClientLink newLink(boolean madeByEnsemble) {
        ensureOpen();
        ClientLink link = new ClientLink(serials.incrementAndGet(), madeByEnsemble, servers.specs());
        links.add(link);
        if (closed) { // closed meanwhile: do not leave a proxy running
            closeQuietly(link);
            throw new IllegalStateException("the ensemble is closed");
        }
        return link;
    }

    private ClientLink linkOf(ZkClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client is null");
        }
        ensureOpen();
        for (ClientLink link : links) {
            if (link.carries(client)) {
                return link;
            }
        }
        throw new IllegalArgumentException(client + " is not a client of this ensemble: make it with newClient()"
                + " or clientBuilder()");
    }

    private String mode(int index) {
        try {
            return servers.words(index).mode();
        } catch (RuntimeException e) {
            return "down";
        }
    }

    private void checkIndex(int index) {
        ensureOpen();
        if (index < 0 || index >= servers.size()) {
            throw new IllegalArgumentException("no server " + index + ": the ensemble has servers 0 to "
                    + (servers.size() - 1));
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the ensemble is closed");
        }
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
    }

    /** Polls {@code condition} every 20 ms until it holds (true) or the deadline passes (false). */
    private static boolean waitUntil(long deadline, BooleanSupplier condition) throws InterruptedException {
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(20);
        }
    }

    private static boolean waitUntilQuietly(long deadline, BooleanSupplier condition) {
        try {
            return waitUntil(deadline, condition);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the ensemble", e);
        }
    }

    private static void closeQuietly(ClientLink link) {
        try {
            link.close();
        } catch (RuntimeException e) {
            LOG.warn("closing {} failed", link, e);
        }
    }
}
