package io.zkcoord.bench;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * The sessions the herd benchmarks spread their waiters over, opened and closed 8 at a time, and
 * the directory listing they all need. Stateless.
 */
final class SessionPool {

    private SessionPool() {
    }

    /** Opens {@code size} clients with 40 s sessions (the most the server allows): pings only after 10 s idle. */
    static List<ZkClient> open(String connect, int size) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(8);
        try {
            List<Future<ZkClient>> futures = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                futures.add(ex.submit(() -> ZkClient.builder().connectString(connect)
                        .sessionTimeout(Duration.ofSeconds(40)).build()));
            }
            List<ZkClient> clients = new ArrayList<>();
            for (Future<ZkClient> f : futures) {
                clients.add(f.get());
            }
            return clients;
        } finally {
            ex.shutdown();
        }
    }

    static void close(List<ZkClient> pool) throws InterruptedException {
        ExecutorService ex = Executors.newFixedThreadPool(8);
        for (ZkClient c : pool) {
            ex.execute(c::close);
        }
        ex.shutdown();
        ex.awaitTermination(60, TimeUnit.SECONDS);
    }

    /** @return the children of {@code dir}; none if it does not exist */
    static List<String> children(ZooKeeper zk, String dir) {
        try {
            return zk.getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
