package io.zkcoord.test;

import io.zkcoord.ZkClient;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.zookeeper.ZooKeeper;

/**
 * The watches a client has registered in its ZooKeeper handle, by kind, as the handle itself keeps them: a
 * watcher the client would still be called for. ZooKeeper lists them through protected methods of {@link
 * ZooKeeper} ({@code getDataWatches()}, ...), read here by reflection. Immutable.
 */
final class ClientWatches {

    private static final String[] KINDS = {"Data", "Exist", "Child", "Persistent", "PersistentRecursive"};

    private final Map<String, List<String>> byKind;

    private ClientWatches(Map<String, List<String>> byKind) {
        this.byKind = byKind;
    }

    /** The watches of {@code client}'s current handle. */
    static ClientWatches of(ZkClient client) {
        ZooKeeper zk = client.zooKeeper();
        Map<String, List<String>> byKind = new LinkedHashMap<>();
        for (String kind : KINDS) {
            List<String> paths = list(zk, "get" + kind + "Watches");
            if (!paths.isEmpty()) {
                byKind.put(kind.equals("PersistentRecursive") ? "persistent recursive" : kind.toLowerCase(),
                        List.copyOf(paths));
            }
        }
        return new ClientWatches(byKind);
    }

    /** @return how many watched paths, over every kind */
    int count() {
        return byKind.values().stream().mapToInt(List::size).sum();
    }

    /** @return e.g. {@code "2 watches: child [/locks/a], data [/config]"}, or empty if there is none */
    Optional<String> describe() {
        if (byKind.isEmpty()) {
            return Optional.empty();
        }
        List<String> parts = new ArrayList<>();
        byKind.forEach((kind, paths) -> parts.add(kind + " " + paths));
        return Optional.of(count() + " watch" + (count() == 1 ? "" : "es") + ": " + String.join(", ", parts));
    }

    @SuppressWarnings("unchecked")
    private static List<String> list(ZooKeeper zk, String getter) {
        try {
            Method m = ZooKeeper.class.getDeclaredMethod(getter);
            m.setAccessible(true);
            return (List<String>) m.invoke(zk);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the client's watches (ZooKeeper." + getter + ")", e);
        }
    }
}
