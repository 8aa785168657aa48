package io.zkcoord.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Servers, ensembles and clients set up the way the fault scenarios need them. Public so that the
 * scenario living in {@code io.zkcoord.lock} (it needs a package-private switch there) shares them.
 */
public final class FaultFixtures {

    static {
        FourLetterWords.enableAllCommands();
    }

    /** Generous enough to ride out a leader election or a server restart without giving up. */
    public static final RetryPolicy PATIENT = RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100));

    private FaultFixtures() {
    }

    /**
     * A standalone server whose tick is {@code tickMillis}: sessions may then be as short as two ticks
     * and as long as twenty (ZooKeeper's bounds), and the server checks expiry every tick.
     */
    public static TestingServer server(int tickMillis) throws Exception {
        return new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, tickMillis, -1), true);
    }

    /** An in-process ensemble of {@code size} servers (ids 1..size), not started. */
    public static TestingCluster cluster(int size, int tickMillis) {
        // Each spec asks the OS for free ports one at a time; two asks can get the same port back
        // (it was free both times), which TestingCluster refuses. Ask again until all differ.
        List<InstanceSpec> specs = new ArrayList<>();
        java.util.Set<Integer> ports = new java.util.HashSet<>();
        for (int id = 1; id <= size; id++) {
            for (;;) {
                InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, id, tickMillis, -1);
                java.util.Set<Integer> mine = new java.util.HashSet<>(
                        List.of(spec.getPort(), spec.getElectionPort(), spec.getQuorumPort()));
                if (mine.size() == 3 && java.util.Collections.disjoint(mine, ports)) {
                    ports.addAll(mine);
                    specs.add(spec);
                    break;
                }
            }
        }
        return new TestingCluster(specs);
    }

    /** A client with the {@link #PATIENT} retry policy, connected before it returns. */
    public static ZkClient client(String connectString, Duration sessionTimeout) {
        return ZkClient.builder()
                .connectString(connectString)
                .sessionTimeout(sessionTimeout)
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(PATIENT)
                .build();
    }

    /** @return the member of {@code cluster} that answers {@code srvr} with {@code Mode: leader}, if any */
    public static Optional<InstanceSpec> leader(TestingCluster cluster) {
        for (InstanceSpec spec : cluster.getInstances()) {
            if ("leader".equals(mode(spec))) {
                return Optional.of(spec);
            }
        }
        return Optional.empty();
    }

    /** @return the mode {@code srvr} reports, or {@code "down"} if the server does not serve */
    public static String mode(InstanceSpec spec) {
        try {
            return FourLetterWords.of(spec.getConnectString()).mode();
        } catch (RuntimeException e) {
            return "down";
        }
    }

    /** Waits until one member leads and every other member of {@code serving} follows it. */
    public static InstanceSpec awaitQuorum(TestingCluster cluster, List<InstanceSpec> serving, Duration within) {
        Await.until(within, () -> {
            int leaders = 0;
            int followers = 0;
            for (InstanceSpec spec : serving) {
                String mode = mode(spec);
                leaders += mode.equals("leader") ? 1 : 0;
                followers += mode.equals("follower") ? 1 : 0;
            }
            return leaders == 1 && followers == serving.size() - 1;
        }, () -> "no quorum among " + serving);
        return leader(cluster).orElseThrow();
    }

    /** Creates {@code path} and its parents as persistent nodes, if missing. */
    public static void createPath(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        StringBuilder sofar = new StringBuilder();
        for (String part : path.substring(1).split("/")) {
            sofar.append('/').append(part);
            try {
                zk.create(sofar.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // there already
            }
        }
    }

    /** @return the children of {@code dir} owned (as ephemeral nodes) by {@code sessionId}, in name order */
    public static List<String> nodesOf(ZooKeeper zk, String dir, long sessionId) {
        List<String> owned = new ArrayList<>();
        for (String name : InvariantChecker.children(zk, dir)) {
            try {
                Stat stat = zk.exists(dir + "/" + name, false);
                if (stat != null && stat.getEphemeralOwner() == sessionId) {
                    owned.add(name);
                }
            } catch (KeeperException e) {
                throw new AssertionError("cannot read " + dir + "/" + name + ": " + e.code(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
        owned.sort(null);
        return owned;
    }

    /** Waits until {@code dir} has {@code count} children, as {@code zk} sees them. */
    public static void awaitChildren(String what, ZooKeeper zk, String dir, int count, Duration within) {
        Await.until(what, within, () -> InvariantChecker.children(zk, dir).size() == count);
    }

    /**
     * A step for a {@link LockThread}: takes {@code lock}, enters {@code checker} as the exclusive holder
     * {@code who} and writes; the step fails with {@code writeMessage} if the write is refused.
     *
     * @return the step, whose result is the holder's entry
     */
    public static Callable<InvariantChecker.Entry> lockAndWrite(InvariantChecker checker, String who, ZkLock lock,
            String writeMessage) {
        return () -> {
            lock.lock();
            InvariantChecker.Entry e = checker.enter(who, lock.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
            assertTrue(checker.write(e), writeMessage);
            return e;
        };
    }

    /** A step for a {@link LockThread}: takes {@code lock}, enters {@code checker} as the exclusive holder {@code who}. */
    public static Callable<InvariantChecker.Entry> lockAndEnter(InvariantChecker checker, String who, ZkLock lock) {
        return () -> {
            lock.lock();
            return checker.enter(who, lock.fencingToken(), InvariantChecker.Mode.EXCLUSIVE);
        };
    }

    /** A step for the {@link LockThread} that holds {@code lock}: leaves {@code checker}, then unlocks. */
    public static Callable<Void> leaveAndUnlock(InvariantChecker checker, InvariantChecker.Entry entry, ZkLock lock) {
        return () -> {
            checker.leave(entry);
            lock.unlock();
            return null;
        };
    }

    /**
     * A standalone server (see {@link #server}) and an observer client on it, started before the first test
     * of a class and closed after its last: register it with {@code @RegisterExtension static final}.
     */
    public static final class ObservedServer implements BeforeAllCallback, AfterAllCallback {
        private final int tickMillis;
        private final Duration observerSession;
        private TestingServer server;
        private ZkClient observer;

        /** @param observerSession the observer client's session timeout */
        public ObservedServer(int tickMillis, Duration observerSession) {
            this.tickMillis = tickMillis;
            this.observerSession = observerSession;
        }

        @Override
        public void beforeAll(ExtensionContext context) throws Exception {
            server = server(tickMillis);
            observer = client(server.getConnectString(), observerSession);
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            if (observer != null) {
                observer.close();
            }
            if (server != null) {
                server.close();
            }
        }

        /** @return the server's connect string */
        public String connectString() {
            return server.getConnectString();
        }

        /** @return the observer's ZooKeeper handle, to look at lock directories without taking part */
        public ZooKeeper observer() {
            return observer.zooKeeper();
        }
    }

    /** Records every connection state of a client, with when it was reported. Thread-safe. */
    public static final class StateLog {
        private final List<ConnectionState> states = new ArrayList<>();
        private final List<Long> times = new ArrayList<>();

        /** A log listening to {@code client} from now on. */
        public static StateLog of(ZkClient client) {
            StateLog log = new StateLog();
            client.addConnectionListener(log::add);
            return log;
        }

        private synchronized void add(ConnectionState state) {
            states.add(state);
            times.add(System.nanoTime());
        }

        /** @return every state reported so far, oldest first */
        public synchronized List<ConnectionState> states() {
            return List.copyOf(states);
        }

        /** @return when {@code state} was first reported at or after {@code sinceNanos}, or -1 */
        public synchronized long firstAt(ConnectionState state, long sinceNanos) {
            for (int i = 0; i < states.size(); i++) {
                if (states.get(i) == state && times.get(i) >= sinceNanos) {
                    return times.get(i);
                }
            }
            return -1;
        }

        /** Waits until {@code state} is reported at or after {@code sinceNanos}; @return when */
        public long await(ConnectionState state, long sinceNanos, Duration within) {
            Await.until(within, () -> firstAt(state, sinceNanos) >= 0, () -> state + " not reported; states " + states());
            return firstAt(state, sinceNanos);
        }
    }
}
