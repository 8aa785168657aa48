package io.zkcoord.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node deleted between its parent's listing and the batch that reads its data: a read-only {@code multi}
 * answers an error for that one read and the data of the others (the client's callback then carries the
 * error's code with every result). The load leaves the gone node out and keeps its siblings.
 */
@Timeout(120)
class SubtreeLoaderGoneNodeTest {

    private TestingServer server;
    private ZooKeeper writer;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        writer = connect(server.getConnectString());
    }

    @AfterEach
    void stop() throws Exception {
        writer.close();
        server.close();
    }

    private static ZooKeeper connect(String connectString) throws Exception {
        CompletableFuture<Void> connected = new CompletableFuture<>();
        ZooKeeper zk = new ZooKeeper(connectString, 30_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.complete(null);
            }
        });
        connected.get(60, TimeUnit.SECONDS);
        return zk;
    }

    /** Deletes one node of the first batch it sends, just before it: the session runs the delete first. */
    private static final class DeletingBeforeBatch extends ZooKeeper {
        private final AtomicBoolean deleted = new AtomicBoolean();

        DeletingBeforeBatch(String connectString) throws Exception {
            super(connectString, 30_000, e -> { });
        }

        @Override
        public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
            List<Op> list = new ArrayList<>();
            ops.forEach(list::add);
            if (list.size() > 2 && deleted.compareAndSet(false, true)) {
                delete(list.get(list.size() / 2).getPath(), -1, (rc, path, c) -> { }, null);
            }
            super.multi(list, cb, ctx);
        }
    }

    @Test
    void aNodeGoneBeforeItsBatchIsLeftOutAndItsSiblingsAreLoaded() throws Exception {
        writer.create("/gone", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        List<Op> ops = new ArrayList<>();
        for (int c = 0; c < 20; c++) {
            ops.add(Op.create("/gone/c" + c, new byte[] {(byte) c}, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT));
        }
        writer.multi(ops);
        DeletingBeforeBatch zk = new DeletingBeforeBatch(server.getConnectString());
        try {
            CompletableFuture<Map<String, HeldNode>> loaded = new CompletableFuture<>();
            new SubtreeLoader(zk, "/gone", Integer.MAX_VALUE, true, true, path -> -1, new AtomicBoolean(), "test",
                    (nodes, failure) -> {
                        if (failure != null) {
                            loaded.completeExceptionally(failure);
                        } else {
                            loaded.complete(nodes);
                        }
                    }).start();
            Map<String, HeldNode> nodes = loaded.get(60, TimeUnit.SECONDS);
            assertTrue(zk.deleted.get(), "a batch was sent");
            List<String> left = writer.getChildren("/gone", false);
            assertEquals(19, left.size());
            assertNull(nodes.get("/gone/" + missing(left)), "the gone node is left out");
            for (String child : left) {
                HeldNode held = nodes.get("/gone/" + child);
                assertTrue(held != null, "loaded: " + child + "; loaded " + nodes.keySet());
                assertEquals(Integer.parseInt(child.substring(1)), held.data[0]);
            }
            assertEquals(20, nodes.size(), "the top and its 19 children");
            assertFalse(nodes.containsKey(null));
        } finally {
            zk.close();
        }
    }

    private static String missing(List<String> left) {
        for (int c = 0; c < 20; c++) {
            if (!left.contains("c" + c)) {
                return "c" + c;
            }
        }
        throw new AssertionError("nothing was deleted");
    }
}
