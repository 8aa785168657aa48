package io.zkcoord.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.KeeperException;
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
 * Asynchronous, like {@link NaiveLock} (see {@link RawRecipe}): a node is an object, many share one session.
 */
final class FirstWriteRwLock extends RawRecipe {

    /** Rounds that ended held, or with a watch set. */
    final AtomicInteger settled = new AtomicInteger();

    FirstWriteRwLock(String dir) {
        super(dir);
    }

    RwNode newNode(ZooKeeper zk, boolean write) {
        return new RwNode(zk, write);
    }

    /** One reader or writer. */
    final class RwNode extends Node implements AsyncCallback.ChildrenCallback, AsyncCallback.DataCallback {
        final boolean write;

        RwNode(ZooKeeper zk, boolean write) {
            super(zk, write ? "write-" : "read-");
            this.write = write;
        }

        /** Step 2. */
        @Override
        void look() {
            zk.getChildren(dir, false, this, null);
        }

        /** Step 3, then step 4. */
        @Override
        public void processResult(int rc, String path, Object ctx, List<String> children) {
            if (!usable(rc, "getChildren")) {
                return;
            }
            List<String> queue = new ArrayList<>(children);
            queue.sort((a, b) -> Long.compare(sequence(a), sequence(b)));
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
            if (stopped()) {
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
    }
}
