package io.zkcoord.once;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;

/** Makes the missing ancestors of a node, asynchronously, from the top down. Stateless. */
final class Parents {

    private Parents() {
    }

    /** @return the ancestors of {@code path}, top first, without {@code /} and without {@code path} */
    static List<String> of(String path) {
        List<String> ancestors = new ArrayList<>();
        for (int i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) {
            ancestors.add(path.substring(0, i));
        }
        return ancestors;
    }

    /**
     * Creates every ancestor of {@code path} that is missing (persistent, each with the ACL for its
     * own path), one after the other, then tells {@code done} {@code OK}, or the first error other
     * than {@code NODEEXISTS}.
     */
    static void ensure(ZooKeeper zk, String path, Function<String, List<ACL>> acl, Consumer<Code> done) {
        step(zk, of(path), 0, acl, done);
    }

    private static void step(ZooKeeper zk, List<String> ancestors, int i, Function<String, List<ACL>> acl,
            Consumer<Code> done) {
        if (i == ancestors.size()) {
            done.accept(Code.OK);
            return;
        }
        String p = ancestors.get(i);
        zk.create(p, new byte[0], acl.apply(p), CreateMode.PERSISTENT, (rc, path, ctx, name) -> {
            Code code = Code.get(rc);
            if (code == Code.OK || code == Code.NODEEXISTS) {
                step(zk, ancestors, i + 1, acl, done);
            } else {
                done.accept(code);
            }
        }, null);
    }
}
