package io.zkcoord.lock;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException;

/** What the multi-lock tests read of the directories, through an observing client. */
final class MultiLockNodes {

    private final ZkClient observer;

    MultiLockNodes(ZkClient observer) {
        this.observer = observer;
    }

    /** @return a client with a 10 s session */
    static ZkClient client(String connect) {
        return ZkClient.builder().connectString(connect).sessionTimeout(Duration.ofSeconds(10)).build();
    }

    /** @return the children of {@code path}; none if it does not exist */
    List<String> children(String path) {
        try {
            return observer.zooKeeper().getChildren(path, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the full paths of the multi-lock nodes in {@code dirs} */
    List<String> multiNodes(String... dirs) {
        List<String> all = new ArrayList<>();
        for (String d : dirs) {
            for (String c : children(d)) {
                if (c.startsWith("multi-")) {
                    all.add(d + "/" + c);
                }
            }
        }
        return all;
    }
}
