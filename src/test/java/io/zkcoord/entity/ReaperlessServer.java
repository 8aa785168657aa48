package io.zkcoord.entity;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One server per test class whose container reaper is held off ({@link EntityServers#withoutReaper()}),
 * with an admin session, its four-letter-word counters, and sessions made per test and closed after
 * each test. Register it as a static {@code @RegisterExtension} field; its methods may be called
 * from any thread while the class's tests run.
 */
final class ReaperlessServer implements BeforeAllCallback, AfterAllCallback, AfterEachCallback {

    private final Duration sessionTimeout;
    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private TestingServer server;
    private FourLetterWords flw;
    private ZkClient admin;

    /** A fixture whose sessions, the admin's included, all have {@code sessionTimeout}. */
    ReaperlessServer(Duration sessionTimeout) {
        this.sessionTimeout = sessionTimeout;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        FourLetterWords.enableAllCommands();
        server = EntityServers.withoutReaper();
        flw = FourLetterWords.of(server.getConnectString());
        admin = newSession();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        clients.forEach(ZkClient::close);
        clients.clear();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        admin.close();
        server.close();
    }

    /** The session the test reads and writes the tree with, outside the recipes under test; open all class long. */
    ZkClient admin() {
        return admin;
    }

    /** The server's four-letter-word counters ({@code mntr}, {@code wchs}, ...). */
    FourLetterWords flw() {
        return flw;
    }

    /** The server's connect string, for sessions the test manages itself. */
    String connectString() {
        return server.getConnectString();
    }

    /** The children of {@code dir} as the admin session reads them; none if {@code dir} does not exist. */
    List<String> children(String dir) {
        try {
            return admin.zooKeeper().getChildren(dir, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** A new session, closed after the current test. */
    ZkClient client() {
        ZkClient c = newSession();
        clients.add(c);
        return c;
    }

    private ZkClient newSession() {
        return ZkClient.builder().connectString(connectString()).sessionTimeout(sessionTimeout).build();
    }
}
