package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.internal.ClientServices;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Who gets the session's create slots ({@link CreateWindow}) when a backlog waits, against a real
 * server, counted from the order in which the server made the nodes (their {@code czxid}), not
 * from timings. The client's connection is held (a stalled proxy) while the backlog and the other
 * acquisition are asked, so the window is full ({@value CreateWindow#SIZE} creates in flight)
 * and everything else waits in its line; once traffic flows, the other acquisition's node must
 * be among the first few made after those in flight:
 * <ul>
 *   <li>a plain {@code lock()} on a free path, asked after {@value #BACKLOG} {@code
 *       acquireAsync()} on as many fresh paths;
 *   <li>an {@code acquireAsync()} on a path, asked after {@value #BACKLOG} {@code acquireAsync()}
 *       on one other path.
 * </ul>
 * Before the turns, both were made after the whole backlog.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CreateWindowTurnsTest {

    private static final int BACKLOG = 300;
    /** Nodes of the backlog the server may make before the other one, beyond those in flight at the heal. */
    private static final int FEW = 4;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private TestingServer server;
    private ZkProxy proxy;
    private ZkClient observer;
    private ZkClient client;
    private final String parent = "/window-turns-" + System.nanoTime();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        proxy = ZkProxy.to(server.getConnectString());
        observer = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(30))
                .build();
        // A long session: the short stall below must not end it.
        client = ZkClient.builder().connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(40)).build();
        observer.zooKeeper().create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {client, observer, proxy, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    /** A lock() on a free path goes before a backlog of acquireAsync() on fresh paths. */
    @Test
    void aBlockedLockGoesBeforeABacklogOfFreshPaths() throws Exception {
        CreateWindow window = window();
        proxy.stall();
        List<CompletableFuture<ZkLease>> backlog = new ArrayList<>();
        for (int i = 0; i < BACKLOG; i++) {
            backlog.add(new ZkMutex(client, parent + "/key-" + i).acquireAsync());
        }
        Await.until("the window is full", WAIT, () -> window.inFlight() == CreateWindow.SIZE);
        ZkMutex free = new ZkMutex(client, parent + "/free");
        CompletableFuture<Long> locked = CompletableFuture.supplyAsync(() -> {
            free.lock();
            try {
                return free.fencingToken(); // the czxid of its node (and of its directory: one transaction)
            } finally {
                free.unlock();
            }
        });
        Await.until("the lock() waits in the window's line", WAIT, () -> window.blockedWaiting() == 1);
        proxy.heal();

        long freeCzxid = locked.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        CompletableFuture.allOf(backlog.toArray(CompletableFuture[]::new)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        ZooKeeper zk = observer.zooKeeper();
        int before = 0;
        for (int i = 0; i < BACKLOG; i++) {
            if (zk.exists(parent + "/key-" + i, false).getCzxid() < freeCzxid) {
                before++;
            }
        }
        LoggerFactory.getLogger(CreateWindowTurnsTest.class).info("MEASURED lock() after {} acquireAsync() on fresh"
                + " paths: {} of them made before it ({} were in flight)", BACKLOG, before, CreateWindow.SIZE);
        assertTrue(before <= CreateWindow.SIZE + FEW, before + " of the backlog's " + BACKLOG + " nodes were made before"
                + " the lock()'s; at most the " + CreateWindow.SIZE + " in flight and " + FEW + " more may be");
        assertEquals(BACKLOG, backlog.stream().filter(f -> f.join().isValid()).count(), "every fresh path is held");
    }

    /**
     * A thread blocked on an {@code acquireAsync()} future ({@code get()}: how Spring's {@code
     * ZkcoordLock.lock()} waits) goes before a backlog of futures nobody blocks on, as a {@code
     * lock()} does.
     */
    @Test
    void aThreadBlockedOnAFutureGoesBeforeABacklogOfFreshPaths() throws Exception {
        CreateWindow window = window();
        proxy.stall();
        List<CompletableFuture<ZkLease>> backlog = new ArrayList<>();
        for (int i = 0; i < BACKLOG; i++) {
            backlog.add(new ZkMutex(client, parent + "/key-" + i).acquireAsync());
        }
        Await.until("the window is full", WAIT, () -> window.inFlight() == CreateWindow.SIZE);
        CompletableFuture<ZkLease> wanted = new ZkMutex(client, parent + "/free").acquireAsync();
        Thread blocked = new Thread(() -> {
            try {
                wanted.get();
            } catch (Exception e) {
                // the assertions below see the future
            }
        }, "blocked on the future");
        blocked.start();
        Await.until("the thread blocks on the future", WAIT, () -> blocked.getState() == Thread.State.WAITING);
        assertEquals(1, window.blockedWaiting(), "the create the thread blocks on waits among the blocked ones");
        proxy.heal();

        ZkLease lease = wanted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        long freeCzxid = lease.fencingToken();
        CompletableFuture.allOf(backlog.toArray(CompletableFuture[]::new)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        ZooKeeper zk = observer.zooKeeper();
        int before = 0;
        for (int i = 0; i < BACKLOG; i++) {
            if (zk.exists(parent + "/key-" + i, false).getCzxid() < freeCzxid) {
                before++;
            }
        }
        assertTrue(before <= CreateWindow.SIZE + FEW, before + " of the backlog's " + BACKLOG + " nodes were made before"
                + " the blocked future's; at most the " + CreateWindow.SIZE + " in flight and " + FEW + " more may be");
        lease.release();
        blocked.join(WAIT.toMillis());
    }

    /** An acquireAsync() on one path goes within a few slots of a backlog on another path, not after it. */
    @Test
    void oneBacklogDoesNotHoldUpAnotherPath() throws Exception {
        CreateWindow window = window();
        proxy.stall();
        List<CompletableFuture<ZkLease>> backlog = new ArrayList<>();
        ZkMutex busy = new ZkMutex(client, parent + "/busy");
        for (int i = 0; i < BACKLOG; i++) {
            backlog.add(busy.acquireAsync());
        }
        Await.until("the window is full", WAIT, () -> window.inFlight() == CreateWindow.SIZE);
        CompletableFuture<ZkLease> other = new ZkMutex(client, parent + "/other").acquireAsync();
        proxy.heal();

        ZkLease lease = other.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        ZooKeeper zk = observer.zooKeeper();
        long otherCzxid = zk.exists(lease.nodePath(), false).getCzxid();
        Await.until(WAIT, () -> children(parent + "/busy") == BACKLOG, "every acquisition of the backlog has its node");
        int before = 0;
        for (String node : zk.getChildren(parent + "/busy", false)) {
            Stat stat = zk.exists(parent + "/busy/" + node, false);
            if (stat != null && stat.getCzxid() < otherCzxid) {
                before++;
            }
        }
        LoggerFactory.getLogger(CreateWindowTurnsTest.class).info("MEASURED acquireAsync() after {} on one other path:"
                + " {} of them made before it ({} were in flight)", BACKLOG, before, CreateWindow.SIZE);
        assertTrue(before <= CreateWindow.SIZE + FEW, before + " of the backlog's " + BACKLOG + " nodes were made before"
                + " the other path's; at most the " + CreateWindow.SIZE + " in flight and " + FEW + " more may be");
        lease.release();
        backlog.forEach(f -> f.cancel(false));
    }

    private int children(String path) {
        try {
            return observer.zooKeeper().getChildren(path, false).size();
        } catch (Exception e) {
            return -1;
        }
    }

    private CreateWindow window() {
        ClientServices services = ClientServices.of(client);
        return QueueSessions.of(services).of(services.session().join()).creates();
    }
}
