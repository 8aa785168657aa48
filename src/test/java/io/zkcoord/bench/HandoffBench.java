package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import io.zkcoord.election.ZkLeaderElection;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.CounterWindow;
import io.zkcoord.testing.FourLetterWords;
import io.zkcoord.testing.HoldingThread;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;

/**
 * Section {@code handoff}: the first handoffs of an episode on a fresh key, what each costs the
 * server (writes, reads, notifications, from {@code mntr}), for a {@code ZkMutex} (herd_mutex:
 * one holder, {@value #WAITERS} waiters queued one by one, each on its own client) and a leader
 * election (election_handoff: one leader, {@value #WAITERS} candidates, the leader closes). Unlike
 * the herd table, no episode is played before: the first handoff is the first of the key.
 */
final class HandoffBench {

    static final int WAITERS = 20;
    static final int HANDOFFS = 5;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String connect;
    private final FourLetterWords flw;
    private final PrintStream out;
    private final PrintStream progress;
    /** The most writes one measured handoff took. */
    long mostWrites;

    HandoffBench(String connect, PrintStream out, PrintStream progress) {
        this.connect = connect;
        this.flw = FourLetterWords.of(connect);
        this.out = out;
        this.progress = progress;
    }

    void run() throws Exception {
        out.println();
        out.printf("H. First handoffs on a fresh key, %d waiters on %d clients (writes, reads, notifications per handoff)%n",
                WAITERS, WAITERS);
        out.println("   scenario            handoff  writes  reads  fired  requests");
        progress.println("H. herd_mutex ...");
        mutex();
        progress.println("H. election_handoff ...");
        election();
    }

    private void print(String scenario, int i, CounterWindow w) {
        mostWrites = Math.max(mostWrites, w.writes());
        out.printf("   %-18s  %7d  %6d  %5d  %5d  %8d%n", scenario, i + 1, w.writes(), w.reads(), w.fired(), w.requests());
    }

    private List<ZkClient> clients(int n) {
        List<ZkClient> cs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            cs.add(ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(40)).build());
        }
        return cs;
    }

    private void touch(List<ZkClient> cs) throws KeeperException, InterruptedException {
        for (ZkClient c : cs) {
            c.zooKeeper().exists("/", false); // no session is due to ping inside the window
        }
    }

    private void mutex() throws Exception {
        String path = "/handoff-mutex-" + System.nanoTime();
        List<ZkClient> cs = clients(WAITERS + 1);
        BlockingQueue<HoldingThread> order = new LinkedBlockingQueue<>();
        List<HoldingThread> threads = new ArrayList<>();
        try {
            for (int i = 0; i <= WAITERS; i++) {
                HoldingThread t = new HoldingThread("m" + i, new ZkMutex(cs.get(i), path), order::add);
                threads.add(t);
                t.start();
                int queued = i;
                Await.until(WAIT, () -> flw.wchsTotal() == queued, () -> "waiter " + queued + " watching");
                if (i == 0) {
                    order.take();
                }
            }
            CounterWindow.settle(flw);
            for (int h = 0; h < HANDOFFS; h++) {
                touch(cs);
                CounterWindow w = CounterWindow.open(flw);
                threads.get(h).release();
                HoldingThread next = order.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                if (next != threads.get(h + 1)) {
                    throw new IllegalStateException("handoff " + h + ": " + next + " holds");
                }
                w.close();
                print("herd_mutex", h, w);
            }
        } finally {
            threads.forEach(HoldingThread::release);
            for (HoldingThread t : threads) {
                t.join(WAIT.toMillis());
            }
            cs.forEach(ZkClient::close);
        }
    }

    private void election() throws Exception {
        String path = "/handoff-election-" + System.nanoTime();
        List<ZkClient> cs = clients(WAITERS + 1);
        List<ZkLeaderElection> es = new ArrayList<>();
        try {
            for (int i = 0; i <= WAITERS; i++) {
                ZkLeaderElection e = new ZkLeaderElection(cs.get(i), path, "p" + i);
                es.add(e);
                e.start();
                int queued = i;
                Await.until(WAIT, () -> flw.wchsTotal() == queued, () -> "candidate " + queued + " watching");
            }
            if (!es.get(0).awaitLeadership(WAIT)) {
                throw new IllegalStateException("p0 does not lead");
            }
            CounterWindow.settle(flw);
            for (int h = 0; h < HANDOFFS; h++) {
                touch(cs);
                CounterWindow w = CounterWindow.open(flw);
                es.get(h).close();
                if (!es.get(h + 1).awaitLeadership(WAIT)) {
                    throw new IllegalStateException("p" + (h + 1) + " does not lead");
                }
                w.close();
                print("election_handoff", h, w);
            }
        } finally {
            es.forEach(ZkLeaderElection::close);
            cs.forEach(ZkClient::close);
        }
    }
}
