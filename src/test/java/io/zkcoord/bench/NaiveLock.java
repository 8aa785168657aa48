package io.zkcoord.bench;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.AsyncCallback;
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
 * again. Asynchronous (see {@link RawRecipe}): a waiter is an object, many share one session.
 */
final class NaiveLock extends RawRecipe {

    private static final Comparator<String> BY_SEQUENCE = Comparator.comparingLong(RawRecipe::sequence);

    /** getChildren replies received. */
    final AtomicInteger reads = new AtomicInteger();

    NaiveLock(String dir) {
        super(dir);
    }

    Waiter newWaiter(ZooKeeper zk) {
        return new Waiter(zk);
    }

    /** One waiter (or holder) of the naive lock. */
    final class Waiter extends Node implements AsyncCallback.ChildrenCallback {

        Waiter(ZooKeeper zk) {
            super(zk, "lock-");
        }

        /** Step 2: read the children and watch them. Step 3: any change of them wakes this waiter. */
        @Override
        void look() {
            zk.getChildren(dir, this, this, null);
        }

        @Override
        public void processResult(int rc, String path, Object ctx, List<String> children) {
            if (!usable(rc, "getChildren")) {
                return;
            }
            reads.incrementAndGet();
            if (!held && children.stream().min(BY_SEQUENCE).map(name::equals).orElse(false)) {
                held = true;
                holders.add(this);
            }
        }
    }
}
