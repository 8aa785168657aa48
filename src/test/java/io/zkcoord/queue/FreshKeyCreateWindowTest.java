package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.observe.WaitOutcome;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * The transaction that makes a fresh key's directory with its first node is a queue-node create
 * like any other: it goes through the session's {@link CreateWindow}. While the client's
 * connection is held (a stalled proxy: nothing is answered), acquisitions on {@value #KEYS}
 * distinct fresh keys are started and all abandoned; once traffic flows again the ensemble has
 * made at most {@link CreateWindow#SIZE} of their directories (the transactions that were in
 * flight), no queue node is left, and the window has every slot back: a later acquisition on a
 * fresh key is granted.
 *
 * <p>The directories made are counted from the parent's {@code cversion} and children (a create
 * and a delete each raise the {@code cversion} by one), a count rather than a timing.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FreshKeyCreateWindowTest {

    private static final int KEYS = 200;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private TestingServer server;
    private ZkProxy proxy;
    private ZkClient observer;
    private ZkClient client;
    private final String parent = "/fresh-window-" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        proxy = ZkProxy.to(server.getConnectString());
        observer = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(30))
                .build();
        // A long session: the stall below must not end it (nor even drop the connection).
        client = ZkClient.builder().connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(40)).build();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {client, observer, proxy, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    /** Abandoned fresh-key acquisitions send at most the window's transactions; the window gives every slot back. */
    @Test
    void freshKeyTransactionsGoThroughTheCreateWindow() throws Exception {
        observer.zooKeeper().create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        int cversionBefore = stat().getCversion();
        AtomicInteger ended = new AtomicInteger();
        client.addCoordinationListener(new CoordinationListener() {
            @Override
            public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
                ended.incrementAndGet();
            }
        });

        proxy.stall();
        List<CompletableFuture<ZkLease>> futures = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            futures.add(new ZkMutex(client, parent + "/key-" + i).acquireAsync());
        }
        futures.forEach(f -> f.cancel(false));
        Await.until("every acquisition told its end", WAIT, () -> ended.get() == KEYS);
        proxy.heal();

        // Every node of an abandoned attempt is deleted once its transaction's reply arrives.
        Await.until(WAIT, () -> queueNodesUnder() == 0, () -> "no queue node left under " + parent);
        Stat after = stat();
        int changes = after.getCversion() - cversionBefore;
        int made = (changes + after.getNumChildren()) / 2; // changes = made + removed; children = made - removed
        LoggerFactory.getLogger(FreshKeyCreateWindowTest.class).info("MEASURED {} fresh-key acquisitions abandoned in a"
                + " stall: {} directories made once it ended", KEYS, made);
        assertTrue(made <= CreateWindow.SIZE, made + " directories made after " + KEYS + " fresh-key acquisitions were"
                + " abandoned in a stall, more than the " + CreateWindow.SIZE + " creates a session has in flight");
        assertTrue(made > 0, "the transactions in flight during the stall reached the server");
        assertEquals(0, futures.stream().filter(f -> !f.isCancelled()).count(), "every future was cancelled");

        // Every slot came back: a fresh key is granted, and its release leaves no directory.
        ZkMutex later = new ZkMutex(client, parent + "/later");
        Optional<ZkLease> lease = later.tryAcquire(WAIT);
        assertTrue(lease.isPresent(), "an acquisition after the abandoned ones is granted");
        lease.get().close();
        assertEquals(null, observer.zooKeeper().exists(parent + "/later", false), "the release removed its directory");
    }

    private Stat stat() throws Exception {
        return observer.zooKeeper().exists(parent, false);
    }

    private int queueNodesUnder() {
        try {
            int n = 0;
            for (String dir : observer.zooKeeper().getChildren(parent, false)) {
                try {
                    n += observer.zooKeeper().getChildren(parent + "/" + dir, false).size();
                } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
                    // removed meanwhile (the container reaper): no node in it
                }
            }
            return n;
        } catch (Exception e) {
            return -1;
        }
    }
}
