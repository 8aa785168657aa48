package io.zkcoord.bench;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * What the herd table's comparison recipes, {@link NaiveLock} and {@link FirstWriteRwLock}, share (never
 * in the library). They are written with asynchronous calls, so a node is an object, not a thread: many
 * nodes share one ZooKeeper session, and the callbacks of a session run on its event thread. Step 1 of
 * both creates the node as {@code EPHEMERAL_SEQUENTIAL}; a release deletes it; whatever a node watches,
 * its firing makes the node look at the queue again (the recipe's own step 2) unless it holds.
 */
abstract class RawRecipe {

    final String dir;
    /** Watcher callbacks run in the clients (one per node per notification of its session). */
    final AtomicInteger callbacks = new AtomicInteger();
    /** Nodes in the order they found themselves holding. */
    final BlockingQueue<Node> holders = new LinkedBlockingQueue<>();
    final AtomicReference<String> error = new AtomicReference<>();
    private volatile boolean stopped;

    RawRecipe(String dir) {
        this.dir = dir;
    }

    /** Step 1 for every node, as concurrent asynchronous creates, in no particular order. */
    void createAll(List<? extends Node> nodes) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(nodes.size());
        for (Node n : nodes) {
            n.zk.create(dir + "/" + n.prefix, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, path, ctx, name) -> {
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

    /** Step 1 for every node, then, once all exist, step 2 for each. */
    void queueAll(List<? extends Node> nodes) throws InterruptedException {
        createAll(nodes);
        for (Node n : nodes) {
            n.look();
        }
    }

    /** Stops every node reacting to events and deletes every node and the directory. */
    void tearDown(List<? extends Node> nodes, ZooKeeper any) throws InterruptedException, KeeperException {
        stopped = true;
        CountDownLatch done = new CountDownLatch(nodes.size());
        for (Node n : nodes) {
            n.zk.delete(dir + "/" + n.name, -1, (rc, path, ctx) -> done.countDown(), null);
        }
        done.await();
        any.delete(dir, -1);
    }

    boolean stopped() {
        return stopped;
    }

    /** Records the first error; the benchmark reports it. */
    void fail(String what) {
        error.compareAndSet(null, what);
    }

    /**
     * @return whether a reply with {@code rc} to {@code call} is to be acted on: not once stopped, nor if
     *         it failed (then it is recorded as the error)
     */
    boolean usable(int rc, String call) {
        if (stopped) {
            return false;
        }
        if (rc != KeeperException.Code.OK.intValue()) {
            fail(call + ": " + KeeperException.Code.get(rc));
            return false;
        }
        return true;
    }

    /** The sequence number that ends a node's name. */
    static long sequence(String name) {
        return Long.parseLong(name.substring(name.length() - 10));
    }

    /** One node of the recipe: a waiter, or the holder. */
    abstract class Node implements Watcher {
        final ZooKeeper zk;
        /** What the node's name starts with, before the sequence number. */
        private final String prefix;
        volatile String name;
        volatile boolean held;

        Node(ZooKeeper zk, String prefix) {
            this.zk = zk;
            this.prefix = prefix;
        }

        /** The recipe's step 2: look at the queue (asynchronously). */
        abstract void look();

        /** Whatever this node watches changed: it looks again, unless it holds. */
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
