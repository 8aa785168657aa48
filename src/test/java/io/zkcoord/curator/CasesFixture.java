package io.zkcoord.curator;

import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the ported Curator cases ({@link CuratorMutexCasesTest}, {@link CuratorReadWriteCasesTest}) share:
 * one in-process server for the test class, registered with {@code @RegisterExtension}, started before its
 * first test and closed after its last; the waits they use; and a count of a lock directory's nodes.
 *
 * <p>Not thread-safe: JUnit calls it from one thread per class.
 */
final class CasesFixture implements BeforeAllCallback, AfterAllCallback {

    /** Deadline of every wait that should succeed; generous, since the machine is shared. */
    static final Duration WAIT = Duration.ofSeconds(60);
    /** A wait that must end without the lock: the answer, not the time, is checked. */
    static final Duration SHORT = Duration.ofMillis(300);

    private TestingServer server;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        server = new TestingServer(true);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** @return the class's server's connect string */
    String connectString() {
        return server.getConnectString();
    }

    /** @return how many nodes {@code dir} holds, 0 if it does not exist */
    static int children(ZooKeeper zk, String dir) {
        try {
            return zk.exists(dir, false) == null ? 0 : zk.getChildren(dir, false).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
