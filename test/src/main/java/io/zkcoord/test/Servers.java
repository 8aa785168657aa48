package io.zkcoord.test;

import io.zkcoord.testing.FourLetterWords;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.TestingZooKeeperServer;

/**
 * The real servers of one {@link ZkTestEnsemble}: one standalone {@link TestingServer}, or a quorum of
 * {@link TestingCluster} members, each on free loopback ports with a fresh data directory that is deleted
 * when the servers close. Servers are numbered from 0 in the order of {@link #specs()}. Thread-safe: every
 * method that starts or stops a server is synchronized.
 */
final class Servers implements AutoCloseable {

    /**
     * Every tick the server checks for expired sessions; sessions may be from 2 to {@link #MAX_SESSION_MILLIS}.
     * Short, so that expiries and elections are quick in tests.
     */
    static final int TICK_MILLIS = 500;

    /** The longest session timeout a client may negotiate: the library's default of 10 s fits well inside. */
    static final int MAX_SESSION_MILLIS = 60_000;

    private final List<InstanceSpec> specs;
    private final TestingServer standalone;    // null for a quorum
    private final TestingCluster cluster;      // null for a standalone server
    private final boolean[] stopped;           // guarded by this

    private Servers(List<InstanceSpec> specs, TestingServer standalone, TestingCluster cluster) {
        this.specs = specs;
        this.standalone = standalone;
        this.cluster = cluster;
        this.stopped = new boolean[specs.size()];
    }

    /** Starts {@code count} servers (1, or an odd number of quorum members) and returns once they serve. */
    static Servers start(int count) throws Exception {
        FourLetterWords.enableAllCommands(); // serverWatchCount() and leader() read mntr and srvr
        List<InstanceSpec> specs = specs(count);
        if (count == 1) {
            return new Servers(specs, new TestingServer(specs.get(0), true), null);
        }
        TestingCluster cluster = new TestingCluster(specs);
        Servers servers = new Servers(specs, null, cluster);
        try {
            cluster.start();
        } catch (Exception e) {
            servers.close();
            throw e;
        }
        return servers;
    }

    /**
     * One spec per server, with 3 ports each that differ from every other's: each spec asks the OS for free
     * ports one at a time, and two asks can return the same port (free both times), which the cluster refuses.
     */
    private static List<InstanceSpec> specs(int count) {
        Map<String, Object> settings = Map.of(
                "maxSessionTimeout", String.valueOf(MAX_SESSION_MILLIS),
                "4lw.commands.whitelist", "*",
                "admin.enableServer", "false");
        List<InstanceSpec> specs = new ArrayList<>();
        Set<Integer> taken = new HashSet<>();
        for (int id = 1; id <= count; id++) {
            while (true) {
                InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, count == 1 ? -1 : id, TICK_MILLIS,
                        -1, settings);
                Set<Integer> mine = Set.of(spec.getPort(), spec.getElectionPort(), spec.getQuorumPort());
                if (mine.size() == 3 && Collections.disjoint(mine, taken)) {
                    taken.addAll(mine);
                    specs.add(spec);
                    break;
                }
            }
        }
        return List.copyOf(specs);
    }

    List<InstanceSpec> specs() {
        return specs;
    }

    int size() {
        return specs.size();
    }

    /** {@code 127.0.0.1:port} of every server, in index order, joined by commas. */
    String connectString() {
        return specs.stream().map(s -> "127.0.0.1:" + s.getPort()).collect(Collectors.joining(","));
    }

    FourLetterWords words(int index) {
        return new FourLetterWords("127.0.0.1", specs.get(index).getPort());
    }

    /** @return the watches server {@code index} holds (0 if stopped); see {@link ServerWatches} */
    synchronized long watchCount(int index) {
        if (stopped[index]) {
            return 0;
        }
        TestingZooKeeperServer server = standalone != null ? testingServerOf(standalone)
                : cluster.getServers().stream().filter(s -> s.getInstanceSpec().equals(specs.get(index)))
                        .findFirst().orElseThrow();
        return ServerWatches.of(server);
    }

    private static TestingZooKeeperServer testingServerOf(TestingServer server) {
        try {
            java.lang.reflect.Field f = TestingServer.class.getDeclaredField("testingZooKeeperServer");
            f.setAccessible(true);
            return (TestingZooKeeperServer) f.get(server);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("curator-test's TestingServer differs from 5.9's", e);
        }
    }

    synchronized boolean isStopped(int index) {
        return stopped[index];
    }

    synchronized List<Integer> running() {
        List<Integer> up = new ArrayList<>();
        for (int i = 0; i < stopped.length; i++) {
            if (!stopped[i]) {
                up.add(i);
            }
        }
        return up;
    }

    synchronized void stop(int index) throws Exception {
        if (stopped[index]) {
            return;
        }
        if (standalone != null) {
            standalone.stop();
        } else if (!cluster.killServer(specs.get(index))) {
            throw new IllegalStateException("server " + index + " of the ensemble did not stop");
        }
        stopped[index] = true;
    }

    synchronized void restart(int index) throws Exception {
        if (standalone != null) {
            standalone.restart(); // stopped or running: it starts (again) on its data
        } else {
            if (!stopped[index]) {
                cluster.killServer(specs.get(index));
            }
            if (!cluster.restartServer(specs.get(index))) {
                throw new IllegalStateException("server " + index + " of the ensemble did not restart");
            }
        }
        stopped[index] = false;
    }

    @Override
    public synchronized void close() {
        try {
            if (standalone != null) {
                standalone.close();
            } else {
                cluster.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the ensemble's servers", e);
        }
    }
}
