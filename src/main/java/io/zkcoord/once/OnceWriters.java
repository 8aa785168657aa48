package io.zkcoord.once;

import io.zkcoord.ZkClient;
import io.zkcoord.internal.ClientServices;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The writers of one client, one per value node: every recipe object of the client that writes a
 * node goes through the same {@link OnceWriter}, so that the session's one marker for that node
 * has one writer. Thread-safe.
 */
public final class OnceWriters {

    private final ConcurrentHashMap<String, OnceWriter> writers = new ConcurrentHashMap<>();

    private OnceWriters() {
    }

    /**
     * @param client the client
     * @param path a valid node path
     * @return the client's writer of {@code path}
     */
    public static OnceWriter of(ZkClient client, String path) {
        ClientServices services = ClientServices.of(client);
        OnceWriters all = services.shared(OnceWriters.class, OnceWriters::new);
        return all.writers.computeIfAbsent(path, p -> new OnceWriter(services, p));
    }
}
