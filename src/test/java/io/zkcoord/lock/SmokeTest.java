package io.zkcoord.lock;

import static org.junit.jupiter.api.Assertions.*;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void basic() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient a = ZkClient.builder().connectString(server.getConnectString()).build();
             ZkClient b = ZkClient.builder().connectString(server.getConnectString()).build()) {
            ZkMutex m1 = new ZkMutex(a, "/locks/x");
            ZkMutex m2 = new ZkMutex(b, "/locks/x");
            m1.lock();
            long t1 = m1.fencingToken();
            assertFalse(m2.tryLock());
            assertFalse(m2.tryLock(200, TimeUnit.MILLISECONDS));
            assertEquals(1, a.zooKeeper().getChildren("/locks/x", false).size());
            ExecutorService ex = Executors.newFixedThreadPool(4);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger violations = new AtomicInteger();
            Future<?> f = ex.submit(() -> { m2.lock(); try { assertTrue(m2.fencingToken() > t1); } finally { m2.unlock(); } return null; });
            m1.unlock();
            f.get(10, TimeUnit.SECONDS);
            java.util.List<Future<?>> fs = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                ZkMutex m = i % 2 == 0 ? m1 : m2;
                fs.add(ex.submit(() -> { for (int j = 0; j < 30; j++) { m.lock(); try { if (inside.incrementAndGet() != 1) violations.incrementAndGet(); inside.decrementAndGet(); } finally { m.unlock(); } } return null; }));
            }
            for (Future<?> x : fs) x.get(60, TimeUnit.SECONDS);
            assertEquals(0, violations.get());
            assertEquals(0, LockQueue.children(a, "/locks/x").size());
            ZkReadWriteLock rw = new ZkReadWriteLock(a, "/locks/rw");
            rw.writeLock().lock();
            rw.readLock().lock();
            rw.writeLock().unlock();
            assertThrows(IllegalMonitorStateException.class, () -> rw.writeLock().lock());
            rw.readLock().unlock();
            ex.shutdown();
        }
    }
}
