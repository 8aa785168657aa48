package io.zkcoord.security;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fresh in-process server for each test, and the clients the test makes on it (10 s sessions),
 * closed after the test before the server stops. Register it as an instance
 * {@code @RegisterExtension} field; {@link #client} is thread-safe.
 */
final class ServerPerTest implements BeforeEachCallback, AfterEachCallback {

    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private TestingServer server;

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        server = new TestingServer(true);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        clients.forEach(ZkClient::close);
        clients.clear();
        if (server != null) {
            server.close();
        }
    }

    /** A client built by {@code builder} (its identity, its ACLs) on this test's server, closed after the test. */
    ZkClient client(ZkClient.Builder builder) {
        ZkClient c = builder.connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(10)).build();
        clients.add(c);
        return c;
    }
}
