package io.zkcoord.nemesis;

import io.zkcoord.testing.ZkProxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every server-to-server link of an ensemble through a TCP proxy: for each ordered pair (i, j) one proxy for the
 * quorum port and one for the election port of server j, which server i's config lists as j's address. ZooKeeper
 * opens election connections from the higher id to the lower (a lower id's attempt is dropped and answered with a
 * connection back), and learners connect to the leader's quorum port; with a proxy per direction every one of
 * these connections goes through a proxy whatever its direction.
 *
 * <p>{@link #cut(int, int)} silences the pair both ways ({@link ZkProxy#stall()}: packets are held, as a dropped
 * network holds them in TCP retransmissions; ZooKeeper's own timeouts notice). Cuts are counted per pair, so
 * overlapping partitions heal a pair only when the last of them ends. Thread-safe.
 */
final class Links implements AutoCloseable {

    private final Map<Long, ZkProxy> quorum = new HashMap<>();
    private final Map<Long, ZkProxy> election = new HashMap<>();
    private final Map<Long, Integer> cuts = new HashMap<>(); // unordered pair key -> active cuts; guarded by this

    Links(List<ServerProcess> servers) {
        for (ServerProcess from : servers) {
            for (ServerProcess to : servers) {
                if (from != to) {
                    quorum.put(key(from.id, to.id), new ZkProxy(ServerProcess.HOST, to.quorumPort));
                    election.put(key(from.id, to.id), new ZkProxy(ServerProcess.HOST, to.electionPort));
                }
            }
        }
    }

    /** The {@code server.to=host:quorum:election} line of server {@code from}'s view. */
    String viewLine(int from, int to) {
        return "server." + to + "=" + ServerProcess.HOST + ":" + quorum.get(key(from, to)).port() + ":"
                + election.get(key(from, to)).port();
    }

    /** Partitions servers {@code a} and {@code b} from each other (both directions, both ports). */
    synchronized void cut(int a, int b) {
        long pair = key(Math.min(a, b), Math.max(a, b));
        int n = cuts.merge(pair, 1, Integer::sum);
        if (n == 1) {
            for (ZkProxy p : proxies(a, b)) {
                p.stall();
            }
        }
    }

    /** Ends one {@link #cut(int, int)} of the pair; the link heals when no cut of it remains. */
    synchronized void heal(int a, int b) {
        long pair = key(Math.min(a, b), Math.max(a, b));
        Integer n = cuts.get(pair);
        if (n == null) {
            return;
        }
        if (n > 1) {
            cuts.put(pair, n - 1);
            return;
        }
        cuts.remove(pair);
        for (ZkProxy p : proxies(a, b)) {
            p.heal();
        }
    }

    /** Heals every link at once, whatever cuts are active. */
    synchronized void healAll() {
        cuts.clear();
        quorum.values().forEach(ZkProxy::heal);
        election.values().forEach(ZkProxy::heal);
    }

    private List<ZkProxy> proxies(int a, int b) {
        return List.of(quorum.get(key(a, b)), quorum.get(key(b, a)), election.get(key(a, b)), election.get(key(b, a)));
    }

    private static long key(int from, int to) {
        return ((long) from << 32) | to;
    }

    @Override
    public void close() {
        quorum.values().forEach(ZkProxy::close);
        election.values().forEach(ZkProxy::close);
    }
}
