package io.zkcoord.bench;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Variant (b) of the herd table, for comparison only (never in the library): the naive lock whose
 * waiters all watch the lock directory's children.
 *
 * <ol>
 *   <li>Create {@code <dir>/lock-} as {@code EPHEMERAL_SEQUENTIAL}.
 *   <li>Read the directory's children <em>with a watch</em>. Lowest sequence number: held.
 *   <li>Otherwise, on every change of the children, go to 2.
 * </ol>
 * Release deletes the node, which changes the children: every waiter wakes and reads them all
 * again. Written with asynchronous calls, so a waiter is an object, not a thread: many waiters
 * share one ZooKeeper session, and the callbacks of a session run on its event thread.
 */
final class NaiveLock {

    private static final Comparator<String> BY_SEQUENCE = Comparator.comparingLong(NaiveLock::sequence);

    private final String dir;
    /** Watcher callbacks run in the clients (one per waiter per notification of its session). */
    final AtomicInteger callbacks = new AtomicInteger();
    /** getChildren replies received. */
    final AtomicInteger reads = new AtomicInteger();
    /** Waiters in the order they found themselves holding. */
    final BlockingQueue<Waiter> holders = new LinkedBlockingQueue<>();
    final AtomicReference<String> error = new AtomicReference<>();
    private volatile boolean stopped;

    NaiveLock(String dir) {
        this.dir = dir;
    }

    Waiter newWaiter(ZooKeeper zk) {
        return new Waiter(zk);
    }

    /** Step 1 for every waiter, as concurrent asynchronous creates, in no particular order. */
    void createAll(List<Waiter> waiters) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(waiters.size());
        for (Waiter w : waiters) {
            w.zk.create(dir + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, path, ctx, name) -> {
                        if (rc == KeeperException.Code.OK.intValue()) {
                            w.name = name.substring(dir.length() + 1);
                        } else {
                            fail("create: " + KeeperException.Code.get(rc));
                        }
                        done.countDown();
                    }, null);
        }
        done.await();
    }

    /** Stops every waiter reacting to events and deletes every node and the directory. */
    void tearDown(List<Waiter> waiters, ZooKeeper any) throws InterruptedException, KeeperException {
        stopped = true;
        CountDownLatch done = new CountDownLatch(waiters.size());
        for (Waiter w : waiters) {
            w.zk.delete(dir + "/" + w.name, -1, (rc, path, ctx) -> done.countDown(), null);
        }
        done.await();
        any.delete(dir, -1);
    }

    private void fail(String what) {
        error.compareAndSet(null, what);
    }

    static long sequence(String name) {
        return Long.parseLong(name.substring(name.length() - 10));
    }

    /** One waiter (or holder) of the naive lock. */
    final class Waiter implements Watcher, AsyncCallback.ChildrenCallback {
        final ZooKeeper zk;
        volatile String name;
        volatile boolean held;

        Waiter(ZooKeeper zk) {
            this.zk = zk;
        }

        /** Step 2: read the children and watch them. */
        void read() {
            zk.getChildren(dir, this, this, null);
        }

        /** Step 3: any change of the children wakes this waiter; it reads them again. */
        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None || stopped) {
                return;
            }
            callbacks.incrementAndGet();
            if (!held) {
                read();
            }
        }

        @Override
        public void processResult(int rc, String path, Object ctx, List<String> children) {
            if (stopped) {
                return;
            }
            if (rc != KeeperException.Code.OK.intValue()) {
                fail("getChildren: " + KeeperException.Code.get(rc));
                return;
            }
            reads.incrementAndGet();
            if (!held && children.stream().min(BY_SEQUENCE).map(name::equals).orElse(false)) {
                held = true;
                holders.add(this);
            }
        }

        /** Release: delete the node. */
        void release() throws KeeperException, InterruptedException {
            zk.delete(dir + "/" + name, -1);
        }
    }
}
