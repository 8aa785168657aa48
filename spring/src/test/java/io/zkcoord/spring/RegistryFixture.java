package io.zkcoord.spring;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;

/**
 * One real in-process ZooKeeper server for a test class, clients on it closed after each test, and
 * threads for the test's holders and waiters.
 */
final class RegistryFixture implements AutoCloseable {

    private static final AtomicInteger ROOTS = new AtomicInteger();

    final TestingServer server;
    private final List<ZkClient> clients = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    RegistryFixture(TestingServer server) {
        this.server = server;
    }

    /** @return a new client with a 4 s session */
    ZkClient client() {
        ZkClient client = ZkClient.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(Duration.ofSeconds(4))
                .build();
        clients.add(client);
        return client;
    }

    /** @return a root path no other test uses */
    static String root() {
        return "/registry-test-" + ROOTS.incrementAndGet();
    }

    /** Runs {@code task} on a thread of its own. */
    <T> Future<T> submit(java.util.concurrent.Callable<T> task) {
        return threads.submit(task);
    }

    /**
     * @return true if a thread of {@code registry} other than the caller can take {@code key} at once
     *     (it releases it again)
     */
    boolean freeFor(ZkcoordLockRegistry registry, String key) throws Exception {
        return threads.submit(() -> {
            ZkcoordLock lock = registry.obtain(key);
            if (lock.tryLock()) {
                lock.unlock();
                return true;
            }
            return false;
        }).get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        threads.shutdownNow();
        clients.forEach(ZkClient::close);
    }
}
