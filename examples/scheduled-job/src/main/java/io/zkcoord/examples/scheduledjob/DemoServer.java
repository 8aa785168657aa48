package io.zkcoord.examples.scheduledjob;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;

/**
 * The demo's ZooKeeper: one standalone server in a process of its own, on 127.0.0.1.
 * Arguments: client port, data folder. Exits with the demo ({@link ExitWithParent}).
 */
public final class DemoServer {

    private DemoServer() {
    }

    public static void main(String[] args) throws Exception {
        ExitWithParent.watchParent();
        Path dataDir = Path.of(args[1]);
        Path cfg = dataDir.resolve("zoo.cfg");
        Files.writeString(cfg, String.join("\n",
                "tickTime=500",
                "clientPortAddress=127.0.0.1",
                "clientPort=" + args[0],
                "dataDir=" + dataDir.toAbsolutePath(),
                "admin.enableServer=false",
                ""));
        ServerConfig config = new ServerConfig();
        config.parse(cfg.toString());
        new ZooKeeperServerMain().runFromConfig(config);
    }
}
