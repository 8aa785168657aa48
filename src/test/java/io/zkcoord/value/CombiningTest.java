package io.zkcoord.value;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.ZkProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client's operations on one counter queued behind a running one share one write, answered as
 * if applied one after another in call order. The queue is built deterministically: the proxy
 * holds the running operation's request until every later one has been submitted, and the
 * node's version (one step per write the server applied) shows how many writes there were.
 *
 * <p>A blocking call returns as soon as its answer is in, a moment before its writer hands over to
 * the next operation (on ZooKeeper's event thread): a call made right after it may find the writer
 * still busy and queue, so that "the running one" is itself combined with the calls after it. The
 * checks allow that (one write or two), never more.
 */
@Timeout(120)
class CombiningTest {

    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static ZkClient through(ZkProxy proxy) {
        return ZkClient.builder().connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(30)).build();
    }

    private static int version(ZkClient c, String path) throws Exception {
        return c.zooKeeper().exists(path, false).getVersion();
    }

    /**
     * Checks that {@code path} took one or two writes since {@code before}: the running operation,
     * then the queue in one write; or all in one, if the writer handed over after they queued.
     */
    private static void assertOneOrTwoWrites(ZkClient c, String path, int before, String what) throws Exception {
        int writes = version(c, path) - before;
        assertTrue(writes == 1 || writes == 2, what + " (all in one if the writer handed over after they queued): "
                + writes + " writes");
    }

    /** 99 additions queued behind a running one land in one write; each returns its own prefix sum. */
    @Test
    void queuedAdditionsShareOneWrite() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString()); ZkClient c = through(proxy)) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/combining/adds");
            assertEquals(1000, counter.addAndGet(1000));
            int before = version(c, "/combining/adds");
            proxy.stall();
            List<CompletableFuture<Long>> calls = new ArrayList<>();
            for (int delta = 1; delta <= 100; delta++) {
                calls.add(counter.addAndGetAsync(delta));
            }
            proxy.heal();
            long expected = 1000;
            for (int delta = 1; delta <= 100; delta++) {
                expected += delta;
                assertEquals(expected, calls.get(delta - 1).get(60, TimeUnit.SECONDS), "the value right after addition " + delta);
            }
            assertEquals(expected, counter.get());
            assertOneOrTwoWrites(c, "/combining/adds", before, "the running addition, then the other 99 in one write");
        }
    }

    /** Reads, compare-and-sets, sets and additions queued together answer as if one after another, in call order. */
    @Test
    void mixedQueueAnswersInCallOrder() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString()); ZkClient c = through(proxy)) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/combining/mixed");
            counter.set(0);
            int before = version(c, "/combining/mixed");
            proxy.stall();
            CompletableFuture<Long> running = counter.addAndGetAsync(1);
            List<CompletableFuture<Object>> queued = new ArrayList<>();
            queued.add(queue(() -> counter.compareAndSet(1, 10)));
            queued.add(queue(() -> counter.compareAndSet(1, 20)));
            queued.add(queue(() -> counter.addAndGet(5)));
            queued.add(queue(counter::get));
            queued.add(queue(() -> {
                counter.set(-1);
                return "set";
            }));
            queued.add(queue(counter::incrementAndGet));
            queued.add(queue(() -> counter.addAndGet(2)));
            proxy.heal();
            assertEquals(1L, running.get(60, TimeUnit.SECONDS));
            List<Object> answers = new ArrayList<>();
            for (CompletableFuture<Object> call : queued) {
                answers.add(call.get(60, TimeUnit.SECONDS));
            }
            assertEquals(List.of(true, false, 15L, 15L, "set", 0L, 2L), answers);
            assertEquals(2, counter.get());
            assertOneOrTwoWrites(c, "/combining/mixed", before, "the running addition, then the queue in one write");
        }
    }

    /** Queued operations that cannot be planned (data that is not 8 bytes) each fail, and nothing is written. */
    @Test
    void aFailedSharedWriteFailsEveryOperationInIt() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString()); ZkClient c = through(proxy)) {
            c.zooKeeper().create("/combining-corrupt", new byte[3], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            ZkAtomicLong counter = new ZkAtomicLong(c, "/combining-corrupt");
            proxy.stall();
            List<CompletableFuture<Long>> calls = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                calls.add(counter.addAndGetAsync(1));
            }
            proxy.heal();
            for (CompletableFuture<Long> call : calls) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
                assertInstanceOf(CoordinationException.class, e.getCause(), e.getCause().toString());
            }
            assertEquals(0, version(c, "/combining-corrupt"));
            assertEquals(3, c.zooKeeper().getData("/combining-corrupt", false, null).length);
        }
    }

    /**
     * The shared write reaches the server and its reply is lost: read back after the reconnection,
     * it is found applied, and every operation in it gets its own answer from that one write (none
     * repeated, none dropped). The running operation is a read (an addition of 0), so the first
     * {@code multi} through the proxy is the shared write.
     */
    @Test
    void aSharedWriteWhoseReplyIsLostAnswersEachOperationOnce() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString()); ZkClient c = through(proxy)) {
            ZkAtomicLong counter = new ZkAtomicLong(c, "/combining/lost");
            assertEquals(1000, counter.addAndGet(1000));
            int before = version(c, "/combining/lost");
            proxy.stall();
            CompletableFuture<Long> running = counter.addAndGetAsync(0);
            List<CompletableFuture<Long>> calls = new ArrayList<>();
            for (int delta = 1; delta <= 10; delta++) {
                calls.add(counter.addAndGetAsync(delta));
            }
            CompletableFuture<Void> cut = proxy.cutAfterNextMulti();
            proxy.heal();
            assertEquals(1000L, running.get(60, TimeUnit.SECONDS));
            long expected = 1000;
            for (int delta = 1; delta <= 10; delta++) {
                expected += delta;
                assertEquals(expected, calls.get(delta - 1).get(60, TimeUnit.SECONDS), "the value right after addition " + delta);
            }
            assertTrue(cut.isDone(), "the shared write's reply was cut");
            assertEquals(expected, counter.get());
            assertEquals(before + 1, version(c, "/combining/lost"), "the ten additions in one write, applied once");
        }
    }

    /**
     * An operation that cannot be planned (it reads data that is not 8 bytes) fails alone: a
     * {@code set} queued with it, which needs no decoding, repairs the node as it would alone, and
     * the operations after the set answer on what it wrote, in the same one write.
     */
    @Test
    void anOperationThatCannotBePlannedFailsAlone() throws Exception {
        try (ZkProxy proxy = ZkProxy.to(server.getConnectString()); ZkClient c = through(proxy)) {
            c.zooKeeper().create("/combining-repair", new byte[3], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            ZkAtomicLong counter = new ZkAtomicLong(c, "/combining-repair");
            proxy.stall();
            CompletableFuture<Long> running = counter.addAndGetAsync(1);
            CompletableFuture<Object> read = queue(counter::get);
            CompletableFuture<Object> repair = queue(() -> {
                counter.set(5);
                return "set";
            });
            CompletableFuture<Object> readAgain = queue(counter::get);
            CompletableFuture<Object> add = queue(counter::incrementAndGet);
            proxy.heal();
            for (CompletableFuture<?> call : List.of(running, read)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
                assertInstanceOf(CoordinationException.class, e.getCause(), e.getCause().toString());
            }
            assertEquals("set", repair.get(60, TimeUnit.SECONDS), "a set needs no decoding: it repairs the node");
            assertEquals(5L, readAgain.get(60, TimeUnit.SECONDS));
            assertEquals(6L, add.get(60, TimeUnit.SECONDS));
            assertEquals(6, counter.get());
            assertEquals(1, version(c, "/combining-repair"), "the queue after the failed read in one write");
        }
    }

    /**
     * Calls {@code call} on a thread of its own and returns once that thread waits for the answer,
     * so that calls queued one after another are in the writer's queue in that order.
     */
    private static CompletableFuture<Object> queue(Supplier<Object> call) {
        CompletableFuture<Object> answer = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                answer.complete(call.get());
            } catch (Throwable t) {
                answer.completeExceptionally(t);
            }
        }, "queued-call");
        thread.setDaemon(true);
        thread.start();
        Await.until("the call waits for its answer", Duration.ofSeconds(60),
                () -> answer.isDone() || waitsForAnswer(thread));
        return answer;
    }

    /** @return whether {@code thread} is parked in the library's wait for a submitted operation */
    private static boolean waitsForAnswer(Thread thread) {
        if (thread.getState() != Thread.State.WAITING) {
            return false;
        }
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getMethodName().equals("uninterruptibly")) {
                return true;
            }
        }
        return false;
    }
}
