package io.zkcoord;

import io.zkcoord.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** A handle that stops after a failed authentication is a lost session, not a live one. */
class AuthFailureTest {

    /** An authorization the server rejects: the client reports LOST instead of staying CONNECTED on a stopped handle. */
    @Test
    void failedAuthenticationIsReportedAsLost() throws Exception {
        try (TestingServer server = new TestingServer(true);
             ZkClient client = ZkClient.builder()
                     .connectString(server.getConnectString())
                     .authorization("nosuchscheme", "whoever".getBytes())
                     .build()) {
            List<ConnectionState> seen = new CopyOnWriteArrayList<>();
            client.addConnectionListener(seen::add);
            // Before the fix the handle stopped silently and the client went on reporting CONNECTED.
            Await.until("LOST after the failed authentication", Duration.ofSeconds(10),
                    () -> seen.contains(ConnectionState.LOST));
        }
    }
}
