package io.zkcoord.test;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.ZkProxy;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;

/**
 * The network between one client and the ensemble: one {@link ZkProxy} per server, so that a fault
 * touches this client only. Made for every {@link ZkTestEnsemble#newClient()} and every {@link
 * ZkTestEnsemble#clientBuilder()}. Thread-safe.
 */
final class ClientLink implements AutoCloseable {

    private final long serial;
    private final boolean madeByEnsemble;
    private final List<ZkProxy> proxies;
    private final String connectString;
    private volatile ZkClient client; // the client made through this link, when the ensemble knows it

    ClientLink(long serial, boolean madeByEnsemble, List<InstanceSpec> servers) {
        this.serial = serial;
        this.madeByEnsemble = madeByEnsemble;
        this.proxies = servers.stream().map(s -> new ZkProxy("127.0.0.1", s.getPort())).toList();
        this.connectString = proxies.stream().map(ZkProxy::connectString).collect(Collectors.joining(","));
    }

    /** Order of creation in its ensemble: a test's links are those made after its start. */
    long serial() {
        return serial;
    }

    /** Whether {@link ZkTestEnsemble#newClient()} made it (and so closes its client), not a user's builder. */
    boolean madeByEnsemble() {
        return madeByEnsemble;
    }

    /** The proxies' connect string, one {@code 127.0.0.1:port} per server, in server order. */
    String connectString() {
        return connectString;
    }

    ZkClient client() {
        return client;
    }

    void client(ZkClient c) {
        this.client = c;
    }

    /** How messages name the client of this link. */
    String clientName() {
        ZkClient c = client;
        return c != null ? "client " + c : "the client at " + connectString;
    }

    /** Whether {@code c} connects through this link: made by it, or built on its connect string. */
    boolean carries(ZkClient c) {
        if (client == c) {
            return true;
        }
        String theirs = c.connectString();
        int chroot = theirs.indexOf('/');
        return (chroot < 0 ? theirs : theirs.substring(0, chroot)).equals(connectString);
    }

    void stall() {
        proxies.forEach(ZkProxy::stall);
    }

    void refuse() {
        proxies.forEach(ZkProxy::refuse);
    }

    void heal() {
        proxies.forEach(ZkProxy::heal);
    }

    boolean isFaulty() {
        return proxies.stream().anyMatch(p -> p.isStalled() || p.isRefusing());
    }

    /** Closes every connection once; returns how many. */
    int cut() {
        return proxies.stream().mapToInt(ZkProxy::cutAll).sum();
    }

    /** Connections open (or held) through this link now. */
    int openConnections() {
        return proxies.stream().mapToInt(ZkProxy::openConnections).sum();
    }

    /** Closes the client made through it (if the ensemble made it), then every proxy. */
    @Override
    public void close() {
        ZkClient c = madeByEnsemble ? client : null;
        if (c != null && !c.isClosed()) {
            heal(); // an orderly close ends the session on the server at once
            c.close();
        }
        proxies.forEach(ZkProxy::close);
    }

    @Override
    public String toString() {
        return (madeByEnsemble ? "client " : "client built from clientBuilder() ") + "at " + connectString
                + (client != null ? " (" + client + ")" : "");
    }
}
