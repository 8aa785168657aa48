package io.zkcoord.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP server on 127.0.0.1 that accepts every connection and never sends a byte: to a ZooKeeper
 * client, a server that is reachable but silent (a hung process, a network that drops everything
 * after the handshake). Accepted sockets stay open until {@link #close()}.
 *
 * <p>Thread-safe.
 */
public final class SilentServer implements AutoCloseable {

    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    /**
     * Binds a free port and starts accepting.
     *
     * @throws IOException if no port can be bound
     */
    public SilentServer() throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!socket.isClosed()) {
                try {
                    accepted.add(socket.accept());
                } catch (IOException e) {
                    return; // closed
                }
            }
        }, "silent-server-" + socket.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return {@code 127.0.0.1:port} */
    public String connectString() {
        return "127.0.0.1:" + socket.getLocalPort();
    }

    /** @return how many connections were accepted so far */
    public int accepted() {
        return accepted.size();
    }

    @Override
    public void close() throws IOException {
        socket.close();
        for (Socket s : accepted) {
            s.close();
        }
    }
}
