package io.zkcoord.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The inspector against what the recipes actually grant: a read hold taken by downgrading is reported holding, with the write hold's token. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InspectDowngradeTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static TestingServer server;
    private static ExecutorService threads;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() throws Exception {
        threads.shutdownNow();
        server.close();
    }

    private static ZkClient client() {
        return ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10)).build();
    }

    /**
     * A downgraded read hold (write held, read taken, write released) with a writer queued between
     * the two nodes: the recipe keeps the write node as a trailing node and the reader holds. The
     * inspector must say the read node holds, with the write hold's token (the recipe's token for
     * it). The write node at the head is reported holding too: it still stands first, and from the
     * queue alone the inspector cannot tell whether the thread still holds the write lock.
     */
    @Test
    void downgradedReadIsReportedHolding() throws Exception {
        String path = "/review/inspect/downgrade";
        try (ZkClient a = client(); ZkClient b = client(); ZkClient inspector = client()) {
            ZkReadWriteLock mine = new ZkReadWriteLock(a, path);
            mine.writeLock().lock();
            long writeToken = mine.writeLock().fencingToken();
            ZkReadWriteLock other = new ZkReadWriteLock(b, path);
            Future<Boolean> writer = threads.submit(() -> {
                other.writeLock().lock();
                other.writeLock().unlock();
                return true;
            });
            Await.until("the other writer queued", WAIT, () -> entries(inspector, path).size() == 2);

            mine.readLock().lock(); // downgrade: granted at once
            mine.writeLock().unlock(); // the write node stays (a writer is queued between)
            assertTrue(mine.readLock().tryLock(), "the recipe says this thread holds the read lock");
            mine.readLock().unlock();

            QueueSnapshot s = Inspector.inspect(inspector, path);
            try {
                List<QueueSnapshot.Entry> reads = s.entries().stream().filter(e -> e.kind().equals("read")).toList();
                assertEquals(1, reads.size(), s::toString);
                assertTrue(reads.get(0).holding(),
                        "the downgraded read hold is the only hold of " + path + ", but the inspector says: " + s);
                assertEquals(writeToken, reads.get(0).fencingToken(), "a downgraded read carries the write hold's token");
                assertEquals(mine.readLock().fencingToken(), reads.get(0).fencingToken());
            } finally {
                mine.readLock().unlock();
                assertTrue(writer.get(20, TimeUnit.SECONDS));
            }
        }
    }

    private static List<QueueSnapshot.Entry> entries(ZkClient c, String path) {
        try {
            return Inspector.inspect(c, path).entries();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
