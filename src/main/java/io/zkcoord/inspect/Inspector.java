package io.zkcoord.inspect;

import io.zkcoord.CoordinationException;
import io.zkcoord.NotAuthorizedException;
import io.zkcoord.ZkClient;
import io.zkcoord.ZkSession;
import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.QueuePaths;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * Reads a queue directory of any zkcoord recipe and says who holds, since when, and who waits.
 *
 * <pre>{@code
 * QueueSnapshot s = Inspector.inspect(client, "/locks/nightly-export");
 * for (QueueSnapshot.Entry e : s.entries()) {
 *     log.info("{} {} pid {} since {}, token {}", e.holding() ? "HOLDS" : "waits", e.ownerHost(),
 *             e.ownerPid(), e.created(), e.fencingToken());
 * }
 * }</pre>
 *
 * <p><b>Cost.</b> Two round trips whatever the queue length: one {@code getChildren} of the
 * directory, then one {@code multi} of reads with the directory's data and every child's data and
 * stat. An empty or missing directory costs the first only. Nothing is written and no watch is set;
 * the holders and waiters are not disturbed. (A lost connection makes the client's retry policy
 * repeat a read, as for any call.)
 *
 * <p><b>Who holds</b> is decided for each node by the rule of the recipe its kind names, from the
 * queue as read:
 * <ul>
 *   <li>{@code lock} ({@link io.zkcoord.lock.ZkMutex}), {@code write}: held when first;
 *       {@code read}: held when no node of another kind is ahead (every reader that holds is
 *       reported holding), or when taken by downgrading the write hold at the head of the queue
 *       (same session, same thread: reported holding, with the write hold's token); a kind no
 *       recipe here knows counts as exclusive, as the locks count it.
 *   <li>{@code sem} ({@link io.zkcoord.semaphore.ZkSemaphore}): the first N hold, N read from the
 *       directory's data {@code permits=N} (taken as 1 if the directory carries no such count).
 *   <li>{@code leader} ({@link io.zkcoord.election.ZkLeaderElection}): the first node leads. Its
 *       data, the participant id, is reported as {@link QueueSnapshot.Entry#ownerThread()}.
 *   <li>{@code multi} (a multi-lock): {@code holding} means <em>first in this queue</em>. The
 *       multi-lock holds only when its node is first in the queue of every one of its paths, and a
 *       snapshot reads one directory: checking the others would cost a third round trip (their
 *       names are known only from the node's data). A {@code multi} node reported holding may
 *       therefore still wait for another of its paths; inspect those paths to know.
 * </ul>
 * Holding is what the queue says at the moment of the read; a holder whose session has just
 * expired is reported until the server deletes its node.
 *
 * <p><b>Apache Curator's nodes</b> ({@code _c_<uuid>-lock-<seq>} and the like: Curator's own
 * clients, or a recipe under {@link io.zkcoord.Protocol#CURATOR}) are reported as holders and
 * waiters too, by the kind of ours they match ({@code lock-} as {@code lock}, {@code __WRIT__} as
 * {@code write}, {@code __READ__} as {@code read}, {@code latch-} as {@code leader}), in sequence
 * order. Their data is Curator's: an IP address is reported as {@link
 * QueueSnapshot.Entry#ownerHost()}, anything else (a participant id) as {@link
 * QueueSnapshot.Entry#ownerThread()}; the pid is -1.
 *
 * <p><b>A node this client may not read</b> (the directory lets it list the queue, the node's own
 * ACL withholds READ) is reported, not left out: at its place in the queue, counted by the rule,
 * with {@link QueueSnapshot.Entry#ownerReadable()} false ("not authorized"). What its name says is
 * known (kind, sequence); what its data and stat would say is not: fencing token -1, session 0,
 * creation time null, owner fields empty. (ZooKeeper 3.9 answers such a node's {@code exists}
 * with NOAUTH too, so not even its stat can be read.)
 *
 * <p><b>What is not ours</b> never throws: a child whose name is not a queue node's is reported
 * after the queue (kind empty, sequence -1, never holding) and does not count in the rules, as the
 * recipes ignore it; data in no known shape gives empty owner fields. A node that vanishes between
 * the two reads is left out. A directory that does not exist gives an empty snapshot that says so
 * ({@link QueueSnapshot#exists()} false): the locks delete an idle lock's directory, so that is
 * also how an idle lock can look. A path whose children are all foreign (a parent of lock
 * directories, say) gives a snapshot whose {@link QueueSnapshot#isQueueDirectory()} is false.
 *
 * <p><b>A chroot is never created by reading.</b> The Inspector writes nothing. A client's
 * connect string may end in a chroot ({@code zk1:2181/app}) that the client creates when it
 * connects (see {@link ZkClient.Builder#connectString}); to read without changing the ensemble,
 * build the client with {@link ZkClient.Builder#createChroot createChroot(false)}, as {@code zkcoord
 * inspect} does. A mistyped chroot ({@code zk1:2181/nope}) then stays missing, and every path under
 * it reads as missing ({@link QueueSnapshot#exists()} false).
 *
 * <p><b>A missing directory is the idle state</b>, not an error: a lock's last release removes its
 * directory with its node (nothing is left behind for keys used once), and the next acquisition
 * makes it again.
 *
 * <p>Stateless and thread-safe.
 */
public final class Inspector {

    private static final String PERMITS = "permits=";

    private Inspector() {
    }

    /**
     * Reads the directory {@code path} in the client's session. Blocks until ZooKeeper answers both
     * reads (each under the client's retry policy), waiting first for a session if the client has
     * none (after a {@code LOST}).
     *
     * @param client the client to read with
     * @param path the queue directory, for instance {@code /locks/nightly-export}
     * @return the snapshot; empty if the directory has no children, or does not exist (then
     *     {@link QueueSnapshot#exists()} is false)
     * @throws IllegalArgumentException if {@code client} is null or {@code path} cannot name a lock
     *     directory
     * @throws IllegalStateException if the client is closed
     * @throws NotAuthorizedException at once, without a retry, if the directory's ACL withholds
     *     READ from the client's identities: the message says "not authorized" and names the path
     * @throws CoordinationException if ZooKeeper cannot be reached within the retry policy, refuses
     *     the read for another reason, or the session ends during the read
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     */
    public static QueueSnapshot inspect(ZkClient client, String path) throws InterruptedException {
        return inspect(client, path, () -> { });
    }

    /** As {@link #inspect(ZkClient, String)}, running {@code betweenReads} after the queue read (for tests). */
    static QueueSnapshot inspect(ZkClient client, String path, Runnable betweenReads) throws InterruptedException {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        QueuePaths.validate("inspected", path);
        ZkSession session = client.session();
        try {
            // 1. The queue: one getChildren, no watch. A missing directory is an empty queue
            //    (null here), reported as missing.
            List<String> children = session.call(path, zk -> {
                try {
                    return zk.getChildren(path, false);
                } catch (KeeperException.NoNodeException e) {
                    return null;
                }
            });
            if (children == null) {
                return new QueueSnapshot(path, Instant.now(), List.of(), false);
            }
            if (children.isEmpty()) {
                return new QueueSnapshot(path, Instant.now(), List.of(), true);
            }
            // 2. Queue order: the recipes' nodes by sequence, then the other children by name.
            betweenReads.run();
            List<QueueNode> queue = QueueNode.queue(children);
            Set<String> queued = new HashSet<>();
            queue.forEach(n -> queued.add(n.name()));
            List<String> foreign = children.stream().filter(c -> !queued.contains(c)).sorted().toList();
            // 3. One multi of reads: the directory's data (a semaphore's permit count), then every
            //    child's data and stat. A child gone by now answers with an ErrorResult.
            List<Op> reads = new ArrayList<>(children.size() + 1);
            reads.add(Op.getData(path));
            queue.forEach(n -> reads.add(Op.getData(path + "/" + n.name())));
            foreign.forEach(name -> reads.add(Op.getData(path + "/" + name)));
            //    A child whose own ACL withholds READ answers NOAUTH: reported as not authorized.
            List<OpResult> results = session.call(path, zk -> zk.multi(reads));
            Instant readAt = Instant.now();
            return snapshot(path, readAt, queue, foreign, results);
        } catch (KeeperException.NoAuthException e) {
            throw new NotAuthorizedException(path, "read it (inspecting needs READ on the directory)", e);
        } catch (KeeperException e) {
            throw new CoordinationException("cannot inspect " + path + ": " + e.getMessage(), e);
        }
    }

    /** @return true if {@code result} is a read that the node's ACL refused ({@code NOAUTH}) */
    private static boolean refusedRead(OpResult result) {
        return result instanceof OpResult.ErrorResult e && e.getErr() == KeeperException.Code.NOAUTH.intValue();
    }

    /** What was read of one child: its data and stat, both null if its ACL refused the read. */
    private record Read(byte[] data, Stat stat) {

        static final Read REFUSED = new Read(null, null);

        boolean readable() {
            return stat != null;
        }
    }

    /** @return the read of one child; {@link Read#REFUSED} if its ACL refused it; null if it is gone */
    private static Read readOf(OpResult result) {
        if (result instanceof OpResult.GetDataResult r) {
            return new Read(r.getData(), r.getStat());
        }
        return refusedRead(result) ? Read.REFUSED : null;
    }

    /** Builds the snapshot from the reads: {@code results} are the directory's, then the queue's, then the foreign ones. */
    private static QueueSnapshot snapshot(String path, Instant readAt, List<QueueNode> queue, List<String> foreign,
            List<OpResult> results) {
        if (!(results.get(0) instanceof OpResult.GetDataResult dir)) {
            return new QueueSnapshot(path, readAt, List.of(), false); // the directory went between the reads
        }
        // The rules run on the queue as it stands after the second read: a node gone by then
        // no longer counts, as for the recipes themselves. A node this client may not read still
        // counts: it is in the queue.
        List<QueueNode> present = new ArrayList<>(queue.size());
        List<Read> presentResults = new ArrayList<>(queue.size());
        for (int i = 0; i < queue.size(); i++) {
            Read r = readOf(results.get(1 + i));
            if (r != null) {
                present.add(queue.get(i));
                presentResults.add(r);
            }
        }
        boolean[] holding = Holding.decide(present, permits(dir.getData()));
        List<OwnerText> owners = new ArrayList<>(present.size());
        List<Holding.Owner> makers = new ArrayList<>(present.size());
        for (int i = 0; i < present.size(); i++) {
            Read r = presentResults.get(i);
            OwnerText owner = !r.readable() ? OwnerText.UNKNOWN : present.get(i).kind().equals(Holding.LEADER)
                    ? OwnerText.ofParticipant(r.data())
                    : present.get(i).curatorForm() ? OwnerText.ofCurator(r.data()) : OwnerText.parse(r.data());
            owners.add(owner);
            makers.add(new Holding.Owner(r.readable() ? r.stat().getEphemeralOwner() : 0, owner.thread()));
        }
        List<QueueSnapshot.Entry> entries = new ArrayList<>(present.size() + foreign.size());
        for (int i = 0; i < present.size(); i++) {
            QueueNode n = present.get(i);
            Stat stat = presentResults.get(i).stat();
            int from = holding[i] ? -1 : Holding.downgradedFrom(present, makers, i);
            if (from >= 0 && presentResults.get(from).readable()) {
                // A downgraded read hold: it holds, and its token is the write hold's.
                entries.add(new QueueSnapshot.Entry(n.name(), n.kind(), n.sequence(),
                        presentResults.get(from).stat().getCzxid(), stat.getEphemeralOwner(),
                        Instant.ofEpochMilli(stat.getCtime()), owners.get(i).host(), owners.get(i).pid(),
                        owners.get(i).thread(), true));
            } else {
                entries.add(entry(n.name(), n.kind(), n.sequence(), presentResults.get(i), owners.get(i), holding[i]));
            }
        }
        for (int i = 0; i < foreign.size(); i++) {
            Read r = readOf(results.get(1 + queue.size() + i));
            if (r != null) {
                entries.add(entry(foreign.get(i), "", -1, r, r.readable() ? OwnerText.parse(r.data())
                        : OwnerText.UNKNOWN, false));
            }
        }
        return new QueueSnapshot(path, readAt, entries);
    }

    private static QueueSnapshot.Entry entry(String name, String kind, long sequence, Read read, OwnerText owner,
            boolean holding) {
        if (!read.readable()) {
            return new QueueSnapshot.Entry(name, kind, sequence, -1, 0, null, "", -1, "", holding, false);
        }
        Stat stat = read.stat();
        return new QueueSnapshot.Entry(name, kind, sequence, stat.getCzxid(), stat.getEphemeralOwner(),
                Instant.ofEpochMilli(stat.getCtime()), owner.host(), owner.pid(), owner.thread(), holding, true);
    }

    /** @return N from the directory's data {@code permits=N}, or 1 if it says nothing usable */
    static int permits(byte[] dirData) {
        if (dirData == null) {
            return 1;
        }
        String text = new String(dirData, StandardCharsets.UTF_8).trim();
        if (!text.startsWith(PERMITS)) {
            return 1;
        }
        try {
            int n = Integer.parseInt(text.substring(PERMITS.length()).trim());
            return Math.max(n, 1);
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /**
     * Reads a group's members ({@link io.zkcoord.group.ZkGroup}): two round trips, whatever their
     * number; nothing written, no watch set.
     *
     * @param client the client to read with
     * @param path the group's directory
     * @return the members, in join order; empty if the directory does not exist
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws NotAuthorizedException at once, without a retry, if the directory's ACL withholds READ
     *     from the client's identities: the message says "not authorized" and names the path
     * @throws CoordinationException if ZooKeeper cannot be reached within the retry policy or refuses a read
     */
    public static List<io.zkcoord.group.Member> group(ZkClient client, String path) throws InterruptedException {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        QueuePaths.validate("group", path);
        return io.zkcoord.group.GroupReader.members(client, path);
    }

    /**
     * Reads a shard path ({@link io.zkcoord.shard.ZkShardMember}): its members, the coordinator's
     * target assignment, and who owns each shard now with its token, in five round trips whatever
     * the number of shards; nothing written, no watch set.
     *
     * @param client the client to read with
     * @param path the shard path
     * @return the snapshot; {@code shards()} is 0 if {@code path} is not a shard path
     * @throws InterruptedException if interrupted while waiting for ZooKeeper
     * @throws NotAuthorizedException at once, without a retry, if a node read withholds READ from the
     *     client's identities: the message says "not authorized" and names the node
     * @throws CoordinationException if ZooKeeper cannot be reached within the retry policy or refuses a read
     */
    public static io.zkcoord.shard.ShardSnapshot shards(ZkClient client, String path) throws InterruptedException {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        return io.zkcoord.shard.ShardSnapshot.read(client, path);
    }
}
