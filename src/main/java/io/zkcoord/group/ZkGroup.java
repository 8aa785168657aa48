package io.zkcoord.group;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.internal.InOrder;
import io.zkcoord.queue.QueueDirectory;
import io.zkcoord.queue.QueuePaths;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Membership: who is alive in a group, each with a little data.
 *
 * <pre>{@code
 * ZkGroup workers = new ZkGroup(client, "/groups/workers", "worker-3", "10.0.0.7:8080".getBytes(UTF_8));
 * workers.addListener(members -> log.info("now {} workers", members.size()));
 * workers.join();
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One node per member.</b> A member is an {@code EPHEMERAL} node {@code m-<id>} (the id
 *       URL-encoded) under the group's directory, holding the member's data. It lives as long as the
 *       session that made it: a member whose process dies leaves the group when its session
 *       expires.
 *   <li><b>Ids are unique.</b> A second {@link #join()} with an id already held by another session
 *       fails with {@link DuplicateMemberException} (ZooKeeper itself refuses the second node), and
 *       so does one by another joined {@code ZkGroup} of the same id on the same client (whose
 *       session the first one's node belongs to).
 *   <li><b>Rejoined in every new session.</b> After a session is lost the client builds a new one,
 *       and a joined group makes its node again there, until {@link #close()}. A node left by an
 *       earlier session of the same client (the ensemble can restore a session the client had
 *       given up) is deleted first. A node that goes while its session lives (deleted by hand) is
 *       made again once a read of the view misses it.
 *   <li><b>The view.</b> Once joined, or once a listener is added, the group watches its directory
 *       with one child watch: a membership change costs each watcher one notification, one read of
 *       the directory and one {@code multi} read of the members' data, whatever the group's size. {@link
 *       #members()} returns the last view, in join order (creation order of the nodes).
 *   <li><b>Listeners</b> hear every new view once, one at a time, in order, on a library thread.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ZkGroup implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkGroup.class);
    private static final int MAX_ID_BYTES = 1024;
    private static final int MAX_DATA_BYTES = 64 * 1024;
    private static final long REJOIN_DELAY_MILLIS = 1_000;

    private enum Phase { NEW, JOINED, CLOSED }

    /**
     * The member nodes claimed by the joined groups of each client. ZooKeeper refuses a second node
     * of one id only to another session; two groups of one client share its session, so the second
     * is refused here.
     */
    private static final Map<ZkClient, Set<String>> CLAIMED = new WeakHashMap<>();

    private final ZkClient client;
    private final ClientServices services;
    private final String path;
    private final String memberId;
    private final String nodePath;
    private final byte[] data;
    private final QueueDirectory directory;
    private final InOrder events;
    private final List<GroupListener> listeners = new CopyOnWriteArrayList<>();
    private final ConnectionListener connection = this::connectionChanged;
    private final Watcher watcher = this::watched;

    // Guarded by this.
    private Phase phase = Phase.NEW;
    private boolean watching;
    /** The session our node lives in, or 0. */
    private long joinedSession;
    /** Every session of this client that made our node: a node of one of them is ours to delete. */
    private final Set<Long> ourSessions = new HashSet<>();
    private int readGeneration;
    private volatile List<Member> view = List.of();
    /**
     * The last view the listeners were told. Touched only inside {@link #events} tasks, so a
     * listener added there starts from exactly where the others are (not from {@link #view}, which
     * runs ahead of the views still queued for them).
     */
    private List<Member> toldView = List.of();

    /**
     * @param client the client whose session holds the membership
     * @param path the group's directory, e.g. {@code /groups/workers}; made on demand
     * @param memberId this member's id: non-empty, at most 1 KiB in UTF-8, any characters
     * @param data what other members read about this one (copied); null means none; at most 64 KiB
     * @throws IllegalArgumentException if an argument is null (but {@code data}) or out of bounds,
     *     or the path is not a valid directory path
     */
    public ZkGroup(ZkClient client, String path, String memberId, byte[] data) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (memberId == null || memberId.isEmpty()) {
            throw new IllegalArgumentException("memberId must not be null or empty");
        }
        if (memberId.getBytes(StandardCharsets.UTF_8).length > MAX_ID_BYTES) {
            throw new IllegalArgumentException("memberId must be at most " + MAX_ID_BYTES + " bytes in UTF-8");
        }
        if (data != null && data.length > MAX_DATA_BYTES) {
            throw new IllegalArgumentException("data must be at most " + MAX_DATA_BYTES + " bytes, was " + data.length);
        }
        this.client = client;
        this.services = ClientServices.of(client);
        this.path = QueuePaths.validate("group", path);
        this.memberId = memberId;
        this.nodePath = path + "/" + MemberNames.nodeName(memberId);
        this.data = data == null ? new byte[0] : data.clone();
        this.directory = new QueueDirectory(client, path);
        this.events = new InOrder(services.userCallbacks());
    }

    /**
     * Joins the group: makes this member's node in the current session (waiting for a session if
     * there is none), and again in every later session until {@link #close()}. Idempotent: a
     * member already joined in the current session returns at once.
     *
     * <p>Blocks until the node exists; an interrupt ends the wait with {@link CoordinationException}
     * (the interrupt flag set again), the group still joined in the background.
     *
     * @throws DuplicateMemberException if another session holds a member with this id, or another
     *     joined group of this client has this id; the group is then not joined, and {@code join()}
     *     may be called again later
     * @throws IllegalStateException if the group or the client is closed
     * @throws CoordinationException if ZooKeeper cannot be reached within the client's retry policy
     */
    public void join() {
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                throw new IllegalStateException(describe() + " is closed");
            }
            if (phase == Phase.NEW) {
                if (!claim()) {
                    throw new DuplicateMemberException("member " + memberId + " is already in group " + path
                            + ", joined by another group object of the same client");
                }
                phase = Phase.JOINED;
            }
        }
        watch();
        try {
            ZkSession session = client.session();
            synchronized (this) {
                if (joinedSession == session.id() && session.isAlive()) {
                    return;
                }
            }
            makeNode(session);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException(describe() + ": interrupted while joining", e);
        } catch (DuplicateMemberException e) {
            synchronized (this) {
                phase = Phase.NEW; // not a member: nothing to rejoin; join() may be tried again
                unclaim();
            }
            throw e;
        } catch (KeeperException e) {
            throw new CoordinationException(describe() + ": could not join: " + e.getMessage(), e);
        }
    }

    /** @return the last view of the group: every live member, in join order (unmodifiable); never blocks */
    public List<Member> members() {
        return view;
    }

    /**
     * Adds a listener and starts watching the group if it was not yet (in this session and every
     * later one, until {@link #close()}, whether or not this group joined). The listener is told the
     * view the other listeners were told last (if any) first, then every later view, each once.
     *
     * @param listener the listener
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(GroupListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        events.execute(() -> {
            listeners.add(listener);
            if (!toldView.isEmpty()) {
                call(listener, toldView);
            }
        });
        watch();
    }

    /**
     * @param nodeName the name of a child of a group's directory
     * @return the member id it stands for, or empty if it is not a member's node
     */
    public static java.util.Optional<String> memberIdOf(String nodeName) {
        return MemberNames.id(nodeName);
    }

    /** @return this member's id */
    public String memberId() {
        return memberId;
    }

    /** @return the group's directory */
    public String path() {
        return path;
    }

    /**
     * Leaves the group: deletes this member's node (waiting about a second at most; otherwise it
     * goes in the background, or with the session) and stops watching. Idempotent; never throws.
     */
    @Override
    public void close() {
        long session;
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                return;
            }
            if (phase == Phase.JOINED) {
                unclaim();
            }
            phase = Phase.CLOSED;
            session = joinedSession;
            joinedSession = 0;
        }
        client.removeConnectionListener(connection);
        if (session != 0 && !client.isClosed()) {
            ZkSession s = currentSession();
            if (s != null && s.id() == session && s.isAlive()) {
                try {
                    directory.deleteInBackground(s, nodePath).get(1, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    log.debug("{}: leaving goes on in the background: {}", describe(), e.toString());
                }
            }
        }
    }

    @Override
    public String toString() {
        return "ZkGroup[" + path + ", " + memberId + "]";
    }

    // ------------------------------------------------------------------ joining

    /** @return true if this member's node was free in this client, and is now this group's */
    private boolean claim() {
        synchronized (CLAIMED) {
            return CLAIMED.computeIfAbsent(client, c -> new HashSet<>()).add(nodePath);
        }
    }

    private void unclaim() {
        synchronized (CLAIMED) {
            Set<String> claimed = CLAIMED.get(client);
            if (claimed != null) {
                claimed.remove(nodePath);
            }
        }
    }

    /**
     * Makes this member's node in {@code session}:
     * 1. make the directory (containers, with missing parents);
     * 2. create the node; on NODEEXISTS read who holds it:
     *    - this session: already joined;
     *    - an earlier session of this client (restored by the ensemble after the client gave it up):
     *      delete that node (by its version) and create again;
     *    - anyone else: DuplicateMemberException.
     */
    private void makeNode(ZkSession session) throws KeeperException, InterruptedException {
        try {
            directory.createDirectory(session).get();
        } catch (ExecutionException e) {
            throw io.zkcoord.queue.Waits.rethrow(e.getCause());
        }
        synchronized (this) {
            ourSessions.add(session.id());
        }
        for (int attempt = 0; ; attempt++) {
            try {
                session.call(nodePath, zk -> zk.create(nodePath, data, services.aclFor(nodePath), CreateMode.EPHEMERAL));
                break;
            } catch (KeeperException.NodeExistsException e) {
                Stat stat = session.call(nodePath, zk -> zk.exists(nodePath, false));
                if (stat == null) {
                    continue; // gone meanwhile
                }
                long owner = stat.getEphemeralOwner();
                boolean ours;
                synchronized (this) {
                    ours = ourSessions.contains(owner);
                }
                if (owner == session.id()) {
                    break; // made by an earlier try whose reply was lost
                }
                if (!ours || attempt > 3) {
                    throw new DuplicateMemberException("member " + memberId + " is already in group " + path
                            + ", held by session 0x" + Long.toHexString(owner));
                }
                log.info("{}: deleting the node of our earlier session 0x{}", describe(), Long.toHexString(owner));
                try {
                    session.call(nodePath, zk -> {
                        zk.delete(nodePath, stat.getVersion());
                        return null;
                    });
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
                    // gone or replaced meanwhile: the next create tells
                }
            }
        }
        synchronized (this) {
            if (phase != Phase.JOINED) {
                directory.deleteInBackground(session, nodePath); // closed meanwhile
                return;
            }
            joinedSession = session.id();
        }
        log.debug("{} joined in session 0x{}", describe(), Long.toHexString(session.id()));
    }

    /** Events thread of the client. */
    private void connectionChanged(ConnectionState state) {
        if (state == ConnectionState.RECONNECTED || state == ConnectionState.CONNECTED) {
            refresh();
            rejoinIfNeeded();
        }
    }

    private void rejoinIfNeeded() {
        synchronized (this) {
            if (phase != Phase.JOINED || client.isClosed()) {
                return;
            }
        }
        services.session().thenAcceptAsync(session -> {
            synchronized (this) {
                if (phase != Phase.JOINED || joinedSession == session.id()) {
                    return;
                }
            }
            try {
                makeNode(session);
            } catch (DuplicateMemberException e) {
                log.error("{}: cannot join again in session 0x{}: {}; trying again in {} ms", describe(),
                        Long.toHexString(session.id()), e.getMessage(), REJOIN_DELAY_MILLIS);
                later(this::rejoinIfNeeded);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (!client.isClosed()) {
                    log.warn("{}: could not join again; trying again in {} ms: {}", describe(), REJOIN_DELAY_MILLIS, e.toString());
                    later(this::rejoinIfNeeded);
                }
            }
        }, services.userCallbacks());
    }

    /** @return the live session, or null if there is none now (or the client closed meanwhile) */
    private ZkSession currentSession() {
        try {
            return services.session().getNow(null);
        } catch (RuntimeException e) {
            return null; // completed exceptionally: the client is closed
        }
    }

    private void later(Runnable task) {
        if (!client.isClosed()) {
            services.scheduler().schedule(task, REJOIN_DELAY_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    // ------------------------------------------------------------------ the view

    private void watch() {
        synchronized (this) {
            if (watching || phase == Phase.CLOSED) {
                return;
            }
            watching = true;
        }
        // A watch lives only as long as its session: the view is read again (and watched again) in
        // every new session and after every reconnection, whether this group joined or only listens.
        try {
            client.addConnectionListener(connection);
        } catch (IllegalStateException clientClosed) {
            return; // nothing to watch any more
        }
        synchronized (this) {
            if (phase == Phase.CLOSED) {
                client.removeConnectionListener(connection); // closed meanwhile: close() may have missed it
                return;
            }
        }
        refresh();
    }

    private void watched(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            refresh();
        }
    }

    /**
     * Reads the view again (ZooKeeper's callbacks; never blocks):
     * 1. getChildren of the directory, with the group's one watcher (NONODE: exists with it, to
     *    hear the directory made);
     * 2. one multi read of every member's data and stat;
     * 3. the view, sorted by czxid (join order), published if it changed.
     */
    private void refresh() {
        int generation;
        long joinedBefore;
        ZkSession session = currentSession();
        synchronized (this) {
            if (!watching || phase == Phase.CLOSED || client.isClosed()) {
                return;
            }
            generation = ++readGeneration;
            joinedBefore = phase == Phase.JOINED ? joinedSession : 0;
        }
        if (session == null) {
            return; // the next CONNECTED or RECONNECTED reads again
        }
        // A read sent after our node was made in this session sees it, unless it is gone.
        Read read = new Read(session, generation, joinedBefore == session.id());
        try {
            session.zooKeeper().getChildren(path, watcher, (rc, p, ctx, children, stat) -> {
                Code code = Code.get(rc);
                if (code == Code.OK) {
                    readMembers(read, children);
                } else if (code == Code.NONODE) {
                    session.zooKeeper().exists(path, watcher, (rc2, p2, ctx2, st) -> {
                        if (Code.get(rc2) == Code.OK) {
                            refresh(); // made meanwhile
                        } else {
                            viewRead(read, List.of());
                        }
                    }, null);
                }
                // Connection loss or expiry: the next CONNECTED or RECONNECTED reads again.
            }, null);
        } catch (RuntimeException e) {
            log.debug("{}: could not read the group: {}", describe(), e.toString());
        }
    }

    /**
     * One multi read of every member's data and stat: one request whatever their number. (Every
     * member is read again, not only the new names: a member that left and joined again between
     * two reads keeps its node name, and only its stat tells the new session.)
     */
    private void readMembers(Read read, List<String> children) {
        ZkSession session = read.session();
        List<String> names = children.stream().filter(c -> MemberNames.id(c).isPresent()).toList();
        if (names.isEmpty()) {
            viewRead(read, List.of());
            return;
        }
        List<Op> reads = new ArrayList<>(names.size());
        for (String child : names) {
            reads.add(Op.getData(path + "/" + child));
        }
        session.zooKeeper().multi(reads, (rc, p, ctx, results) -> {
            if (Code.get(rc) != Code.OK || results == null) {
                return; // connection trouble: read again on reconnection
            }
            record Joined(Member member, long czxid) { }
            List<Joined> joined = new ArrayList<>();
            for (int i = 0; i < results.size(); i++) {
                if (results.get(i) instanceof OpResult.GetDataResult r) {
                    Member m = new Member(MemberNames.id(names.get(i)).orElseThrow(), r.getData(), r.getStat().getEphemeralOwner());
                    joined.add(new Joined(m, r.getStat().getCzxid()));
                }
            }
            joined.sort(Comparator.comparingLong(Joined::czxid));
            viewRead(read, joined.stream().map(Joined::member).toList());
        }, null);
    }

    /** One read of the view: its session, its generation, and whether this member was joined in that session when it was sent. */
    private record Read(ZkSession session, int generation, boolean joinedBefore) { }

    /**
     * A view was read. If this member had joined in the read's session before the read was sent
     * and is not in it, its node went while the session lived (deleted by hand, or by the late
     * leaving of a closed group of the same id and session): it joins again.
     */
    private void viewRead(Read read, List<Member> members) {
        long session = read.session().id();
        if (read.joinedBefore() && members.stream().noneMatch(m -> m.id().equals(memberId) && m.sessionId() == session)) {
            boolean lost;
            synchronized (this) {
                lost = phase == Phase.JOINED && joinedSession == session;
                if (lost) {
                    joinedSession = 0;
                }
            }
            if (lost) {
                log.warn("{}: our node is gone while our session lives; joining again", describe());
                rejoinIfNeeded();
            }
        }
        publish(read.generation(), members);
    }

    private void publish(int generation, List<Member> members) {
        synchronized (this) {
            if (generation != readGeneration || phase == Phase.CLOSED) {
                return; // a newer read is on its way
            }
            if (members.equals(view)) {
                return;
            }
            view = members;
        }
        events.execute(() -> {
            toldView = members;
            for (GroupListener l : listeners) {
                call(l, members);
            }
        });
    }

    private void call(GroupListener listener, List<Member> members) {
        try {
            listener.membersChanged(members);
        } catch (Throwable t) {
            log.error("{}: group listener {} failed", describe(), listener, t);
        }
    }

    private String describe() {
        return "member " + memberId + " of group " + path;
    }
}
