// snippet:quick-start
package io.zkcoord.examples.snippets;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.retry.RetryPolicy;
import java.time.Duration;

public class QuickStart {

    public static void main(String[] args) throws Exception {
        String connect = args.length > 0 ? args[0] : "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183";
        try (ZkClient client = ZkClient.builder()
                .connectString(connect)
                .sessionTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.exponentialBackoff(Duration.ofMillis(50), Duration.ofSeconds(2), 10))
                .build()) {
            ZkMutex mutex = new ZkMutex(client, "/locks/orders");
            mutex.lock();
            try {
                long token = mutex.fencingToken();   // pass it with every write to the guarded resource
                System.out.println("holding /locks/orders with fencing token " + token);
            } finally {
                mutex.unlock();
            }
        }
    }
}
// end:quick-start
