package io.zkcoord.bench;

import java.util.ArrayList;
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
import org.apache.zookeeper.data.Stat;

/**
 * Variant (d) of the herd table, for comparison only (never in the library): a read/write lock
 * whose blocked readers watch the <em>first</em> write node in the queue (as Curator's
 * {@code InterProcessReadWriteLock} does), instead of the last write node before them.
 *
 * <ol>
 *   <li>Create {@code <dir>/read-} or {@code <dir>/write-} as {@code EPHEMERAL_SEQUENTIAL}.
 *   <li>Read the children (no watch), ordered by sequence number.
 *   <li>Writer: held when first; otherwise watch the node just before it. Reader: held when no
 *       write node is ahead; otherwise watch the first write node of the queue.
 *   <li>Watch with {@code getData}; if the node is already gone go to 2. When the watch fires, go
 *       to 2.
 * </ol>
 * Asynchronous, like {@link NaiveLock}: a node is an object, many share one session.
 */
final class FirstWriteRwLock {

    private final String dir;
    /** Watcher callbacks run in the clients. */
    final AtomicInteger callbacks = new AtomicInteger();
    /** Rounds that ended held, or with a watch set. */
    final AtomicInteger settled = new AtomicInteger();
    final BlockingQueue<Node> holders = new LinkedBlockingQueue<>();
    final AtomicReference<String> error = new AtomicReference<>();
    private volatile boolean stopped;

    FirstWriteRwLock(String dir) {
        this.dir = dir;
    }

    Node newNode(ZooKeeper zk, boolean write) {
        return new Node(zk, write);
    }

    /** Step 1 for every node, as concurrent asynchronous creates. */
    void createAll(List<Node> nodes) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(nodes.size());
        for (Node n : nodes) {
            n.zk.create(dir + "/" + (n.write ? "write-" : "read-"), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL_SEQUENTIAL, (rc, path, ctx, name) -> {
                        if (rc == KeeperException.Code.OK.intValue()) {
                            n.name = name.substring(dir.length() + 1);
                        } else {
                            fail("create: " + KeeperException.Code.get(rc));
                        }
                        done.countDown();
                    }, null);
        }
        done.await();
    }

    /** Stops every node reacting to events and deletes every node and the directory. */
    void tearDown(List<Node> nodes, ZooKeeper any) throws InterruptedException, KeeperException {
        stopped = true;
        CountDownLatch done = new CountDownLatch(nodes.size());
        for (Node n : nodes) {
            n.zk.delete(dir + "/" + n.name, -1, (rc, path, ctx) -> done.countDown(), null);
        }
        done.await();
        any.delete(dir, -1);
    }

    private void fail(String what) {
        error.compareAndSet(null, what);
    }

    /** One reader or writer. */
    final class Node implements Watcher, AsyncCallback.ChildrenCallback, AsyncCallback.DataCallback {
        final ZooKeeper zk;
        final boolean write;
        volatile String name;
        volatile boolean held;

        Node(ZooKeeper zk, boolean write) {
            this.zk = zk;
            this.write = write;
        }

        /** Step 2. */
        void look() {
            zk.getChildren(dir, false, this, null);
        }

        /** Step 3, then step 4. */
        @Override
        public void processResult(int rc, String path, Object ctx, List<String> children) {
            if (stopped) {
                return;
            }
            if (rc != KeeperException.Code.OK.intValue()) {
                fail("getChildren: " + KeeperException.Code.get(rc));
                return;
            }
            List<String> queue = new ArrayList<>(children);
            queue.sort((a, b) -> Long.compare(NaiveLock.sequence(a), NaiveLock.sequence(b)));
            int me = queue.indexOf(name);
            if (me < 0) {
                fail("own node " + name + " missing");
                return;
            }
            String target = null;
            if (write) {
                target = me == 0 ? null : queue.get(me - 1);
            } else {
                for (int i = 0; i < me && target == null; i++) {
                    if (queue.get(i).startsWith("write-")) {
                        target = queue.get(i); // the FIRST write node: the herd-prone rule
                    }
                }
            }
            if (target == null) {
                held = true;
                settled.incrementAndGet();
                holders.add(this);
            } else {
                zk.getData(dir + "/" + target, this, this, null);
            }
        }

        /** Step 4's reply: watching, or the node is already gone. */
        @Override
        public void processResult(int rc, String path, Object ctx, byte[] data, Stat stat) {
            if (stopped) {
                return;
            }
            if (rc == KeeperException.Code.NONODE.intValue()) {
                look();
            } else if (rc == KeeperException.Code.OK.intValue()) {
                settled.incrementAndGet();
            } else {
                fail("getData: " + KeeperException.Code.get(rc));
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None || stopped) {
                return;
            }
            callbacks.incrementAndGet();
            if (!held) {
                look();
            }
        }

        /** Release: delete the node. */
        void release() throws KeeperException, InterruptedException {
            zk.delete(dir + "/" + name, -1);
        }
    }
}
