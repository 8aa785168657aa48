package io.zkcoord.versions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.FourLetterWords;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Version;
import org.junit.jupiter.api.Test;

/**
 * The build's {@code -Dzookeeper.version} switches the client <em>and</em> the server: curator-test's
 * {@code TestingServer} runs whatever zookeeper jar is on the test class path (the pom excludes
 * curator-test's own), so a run with {@code -Dzookeeper.version=3.8.6} tests a 3.8.6 client against
 * a 3.8.6 server. The pom passes the version it built with as {@code zkcoord.test.zookeeper.version}.
 */
class ZooKeeperVersionTest {

    @Test
    void onlyZkCacheNeeds39AndSaysSoWhenMade() throws Exception {
        FourLetterWords.enableAllCommands();
        try (TestingServer server = new TestingServer(true);
                ZkClient zk = ZkClient.builder().connectString(server.getConnectString()).build()) {
            if (Version.getFullVersion().startsWith("3.8.")) {
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                        () -> new io.zkcoord.cache.ZkCache(zk, "/cached"));
                assertTrue(e.getMessage().contains("3.9") && e.getMessage().contains(Version.getFullVersion()),
                        e.getMessage());
            } else {
                new io.zkcoord.cache.ZkCache(zk, "/cached").close();
            }
        }
    }

    @Test
    void clientAndServerAreTheVersionTheBuildAskedFor() throws Exception {
        String asked = System.getProperty("zkcoord.test.zookeeper.version");
        assertNotNull(asked, "surefire passes zkcoord.test.zookeeper.version (see pom.xml)");
        String client = Version.getFullVersion();
        assertTrue(client.startsWith(asked + "-") || client.equals(asked),
                "client jar is " + client + ", the build asked for " + asked);
        FourLetterWords.enableAllCommands();
        try (TestingServer server = new TestingServer(true)) {
            String srvr = FourLetterWords.of(server.getConnectString()).send("srvr");
            String serverVersion = srvr.lines().filter(l -> l.startsWith("Zookeeper version:"))
                    .map(l -> l.substring("Zookeeper version:".length()).trim().split("[-,]")[0])
                    .findFirst().orElse("none in: " + srvr);
            assertEquals(asked, serverVersion, "the in-process server's own version (srvr)");
            // And the library works on it: one session, one write, one read.
            try (ZkClient zk = ZkClient.builder().connectString(server.getConnectString())
                    .sessionTimeout(Duration.ofSeconds(10)).build()) {
                zk.zooKeeper().create("/version-check", asked.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE, org.apache.zookeeper.CreateMode.PERSISTENT);
                assertEquals(asked, new String(zk.zooKeeper().getData("/version-check", false, null),
                        java.nio.charset.StandardCharsets.UTF_8));
            }
        }
    }
}
