package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ConnectionState;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.retry.RetryPolicy;
import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A release that cannot reach the ensemble within the retry policy throws, and still deletes every
 * node of the hold once the connection returns (the session having survived), so nobody queued
 * behind is left waiting for a node that nobody owns any more.
 */
@Timeout(90)
class ReleaseDuringOutageTest {

    private static final String PATH = "/outage/rw";

    private TestingServer server;
    private ZkClient holder;
    private ZkClient other;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        holder = ZkClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(20))
                .retryPolicy(RetryPolicy.fixedDelay(Duration.ofMillis(50), 1))
                .build();
        other = ZkClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(20))
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        holder.close();
        other.close();
        server.close();
    }

    /** A downgraded read released during an outage: its read node and the kept write node both go once the server is back. */
    @Test
    void downgradedReleaseDuringAnOutageLeavesNoNodeBehind() throws Exception {
        ZkReadWriteLock mine = new ZkReadWriteLock(holder, PATH);
        ZkReadWriteLock theirs = new ZkReadWriteLock(other, PATH);
        mine.writeLock().lock();
        CompletableFuture<Long> writer = CompletableFuture.supplyAsync(() -> {
            theirs.writeLock().lock();
            try {
                return theirs.writeLock().fencingToken();
            } finally {
                theirs.writeLock().unlock();
            }
        });
        Await.until("the other writer queued", Duration.ofSeconds(10), () -> children().size() == 2);
        mine.readLock().lock();           // downgrade: a read node behind the queued writer
        mine.writeLock().unlock();        // the write node is kept: a writer queued in between
        assertEquals(3, children().size());

        server.stop();
        Await.until("holder suspended", Duration.ofSeconds(10), () -> holder.state() == ConnectionState.SUSPENDED);
        assertThrows(CoordinationException.class, () -> mine.readLock().unlock());
        assertTrue(!mine.readLock().isHeldByCurrentThread());

        server.restart();
        Await.until("holder reconnected to its session", Duration.ofSeconds(20),
                () -> holder.state() == ConnectionState.RECONNECTED);
        assertTrue(writer.get(15, TimeUnit.SECONDS) > 0, "the queued writer got the lock");
        Await.until("no node left under " + PATH, Duration.ofSeconds(10), () -> children().isEmpty());
    }

    private List<String> children() {
        return LockQueue.children(other, PATH);
    }
}
