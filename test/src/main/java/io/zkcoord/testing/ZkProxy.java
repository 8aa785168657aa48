package io.zkcoord.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback TCP proxy between ZooKeeper clients and one ZooKeeper server, under a test's control. Point the
 * client at {@link #connectString()} (for an ensemble, one proxy per server, their connect strings joined by
 * commas). Needs no change in the code under test.
 *
 * <h2>Modes</h2>
 * <ul>
 *   <li><b>Pass through</b> (the initial mode): bytes flow both ways unchanged.</li>
 *   <li>{@link #stall()}: a partition. Nothing flows either way on any connection; connections stay open. The proxy
 *       keeps <em>reading</em> both sides while stalled and holds what it reads in memory (ZooKeeper's traffic is
 *       small: pings and queued requests), so it notices a side that hangs up. New connections are accepted but
 *       not connected to the server until the heal, as a connection attempt across a partition would not reach
 *       it. Both ends see only silence: the client reports {@code Disconnected} after its read timeout (2/3 of the
 *       session timeout) and the server expires the session after the session timeout.</li>
 *   <li>{@link #heal()}: ends the stall. Held bytes are delivered in order and flow resumes. A connection one of
 *       whose ends hung up during the stall is closed on both sides at the heal and its held bytes are dropped
 *       (so a client's abandoned connection attempt never replays a stale {@code ConnectRequest}, which would
 *       kick the client's live connection off its session). Connections accepted during the stall are connected
 *       to the server now.</li>
 *   <li>{@link #refuse()}: the server is unreachable. Every current connection is closed and every new one is
 *       reset as soon as it is accepted (the client sees its connection attempt fail at once, as with a
 *       refused connection), until {@link #heal()}.</li>
 *   <li>{@link #cutAll()}: closes every current connection on both sides (the client sees a connection loss and
 *       reconnects through the proxy, which keeps accepting).</li>
 *   <li>{@link #cutAfterNextCreate()}: see there.</li>
 * </ul>
 *
 * <h2>How requests are recognised</h2>
 * In the client→server direction the proxy follows ZooKeeper's framing: every frame is a 4-byte big-endian length
 * and a payload. The first frame of a connection is the {@code ConnectRequest} (no request header); every later
 * frame starts with a {@code RequestHeader} (int xid, int type). The server→client direction is framed the same
 * way, its first frame the {@code ConnectResponse}, later ones starting with a {@code ReplyHeader} (int xid, long
 * zxid, int err).
 *
 * <p>Plain blocking sockets, two daemon threads per connection plus one accepting; {@link #close()} stops them all.
 * Thread-safe.
 */
public final class ZkProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ZkProxy.class);

    /** ZooKeeper opcodes (org.apache.zookeeper.ZooDefs.OpCode). */
    static final int OP_CREATE = 1;
    static final int OP_EXISTS = 3;
    static final int OP_MULTI = 14;
    static final int OP_CREATE2 = 15;
    static final int OP_CREATE_CONTAINER = 19;
    static final int OP_CREATE_TTL = 21;

    /** After a cut, the server side is closed when the create's reply arrives, or after this at the latest. */
    static final long CUT_SERVER_CLOSE_FALLBACK_MS = 1_000;

    private static final int CONNECT_TIMEOUT_MS = 5_000;

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicReference<CompletableFuture<Void>> armedCut = new AtomicReference<>();
    /** Whether the armed cut waits for any multi request (a guarded write) rather than a create. */
    private volatile boolean cutOnMulti;
    /** The opcode the armed cut waits for, or 0 when it waits for a create or a multi. */
    private volatile int cutOnOpcode;

    private final Object lock = new Object();
    private final Set<Link> links = new HashSet<>(); // guarded by lock
    private volatile boolean stalled;                // written under lock
    private volatile boolean refusing;               // written under lock
    private volatile boolean closed;                 // written under lock

    /**
     * A proxy to the server at {@code targetHost:targetPort}, listening on an ephemeral loopback port.
     *
     * @param targetHost the server's host
     * @param targetPort the server's client port
     */
    public ZkProxy(String targetHost, int targetPort) {
        this.target = new InetSocketAddress(targetHost, targetPort);
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on loopback", e);
        }
        this.acceptor = new Thread(this::acceptLoop, "zkproxy-" + port() + "-accept");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
        LOG.debug("proxy {} -> {}", port(), target);
    }

    /**
     * A proxy to one server given as {@code host:port} (for instance {@code TestingServer.getConnectString()}).
     *
     * @param hostPort one {@code host:port}
     * @return a running proxy to it
     */
    public static ZkProxy to(String hostPort) {
        HostPort server = HostPort.parse(hostPort);
        return new ZkProxy(server.host(), server.port());
    }

    /**
     * The loopback port clients connect to.
     *
     * @return the port
     */
    public int port() {
        return listener.getLocalPort();
    }

    /**
     * {@code 127.0.0.1:port()}, for a ZooKeeper connect string.
     *
     * @return the proxy's address
     */
    public String connectString() {
        return listener.getInetAddress().getHostAddress() + ":" + port();
    }

    /**
     * The server this proxy forwards to.
     *
     * @return the server's address
     */
    public InetSocketAddress target() {
        return target;
    }

    /** Holds all traffic both ways, like a network partition, until {@link #heal()}. Idempotent. */
    public void stall() {
        synchronized (lock) {
            stalled = true;
        }
        LOG.debug("proxy {} stalled", port());
    }

    /**
     * Makes the server unreachable until {@link #heal()}: closes every current connection and resets every new
     * one as soon as it is accepted. Idempotent.
     */
    public void refuse() {
        synchronized (lock) {
            refusing = true;
        }
        cutAll();
        LOG.debug("proxy {} refusing", port());
    }

    /**
     * Whether the proxy refuses connections ({@link #refuse()}).
     *
     * @return true while refusing
     */
    public boolean isRefusing() {
        return refusing;
    }

    /**
     * Ends a {@link #stall()} or a {@link #refuse()}: held bytes flow on (see the class comment for hung-up
     * connections) and new connections reach the server again. Idempotent.
     */
    public void heal() {
        List<Link> snapshot;
        synchronized (lock) {
            stalled = false;
            refusing = false;
            snapshot = new ArrayList<>(links);
            lock.notifyAll();
        }
        for (Link link : snapshot) {
            link.heal();
        }
        LOG.debug("proxy {} healed ({} connections)", port(), snapshot.size());
    }

    /**
     * Whether the proxy is stalled.
     *
     * @return true while stalled
     */
    public boolean isStalled() {
        return stalled;
    }

    /**
     * Closes every current connection on both sides; returns how many. New connections are accepted as before.
     *
     * @return how many connections were closed
     */
    public int cutAll() {
        List<Link> snapshot;
        synchronized (lock) {
            snapshot = new ArrayList<>(links);
        }
        for (Link link : snapshot) {
            link.closeBoth();
        }
        LOG.debug("proxy {} cut {} connections", port(), snapshot.size());
        return snapshot.size();
    }

    /**
     * Arms a one-shot cut: the next create request any client sends through this proxy (opcodes create,
     * create2, createContainer, createTTL, or a multi whose first op is one of these) is forwarded whole to the
     * server, and then its connection is cut before the reply can reach the client. Exactly:
     * <ol>
     *   <li>the frame is recognised once it has been read whole from the client; from then on nothing more goes
     *       from the server to that client;</li>
     *   <li>the frame is written to the server (if the proxy is stalled, this waits for the heal);</li>
     *   <li>the client side is closed at once, so the client sees a connection loss and its pending request fails
     *       with {@code CONNECTIONLOSS};</li>
     *   <li>the server side is closed when the server's reply to that request (same xid) arrives at the proxy, or
     *       after {@value #CUT_SERVER_CLOSE_FALLBACK_MS} ms, so the server has really processed the create: the
     *       node exists though the client was never told.</li>
     * </ol>
     * Other requests (reads, deletes, pings) pass untouched while armed. Arming again while armed returns the
     * same future.
     *
     * @return completes when that connection has been closed on both sides; completes exceptionally if the
     *         proxy is closed first
     */
    public CompletableFuture<Void> cutAfterNextCreate() {
        return armCut(false);
    }

    /**
     * As {@link #cutAfterNextCreate()}, for the next {@code multi} request of any kind (a guarded
     * write: a check followed by the caller's operations): it reaches the server, then the
     * connection is cut before the reply, so the client cannot know whether it was applied.
     * @return completes when that connection has been closed on both sides
     */
    public CompletableFuture<Void> cutAfterNextMulti() {
        return armCut(true);
    }

    /**
     * As {@link #cutAfterNextCreate()}, for the next {@code exists} request: it reaches the server,
     * then the connection is cut before the reply, so the request fails with {@code CONNECTIONLOSS}.
     * @return completes when that connection has been closed on both sides
     */
    public CompletableFuture<Void> cutAfterNextExists() {
        return armCut(false, OP_EXISTS);
    }

    private CompletableFuture<Void> armCut(boolean onMulti) {
        return armCut(onMulti, 0);
    }

    private CompletableFuture<Void> armCut(boolean onMulti, int opcode) {
        CompletableFuture<Void> fresh = new CompletableFuture<>();
        while (true) {
            CompletableFuture<Void> current = armedCut.get();
            if (current != null) {
                return current;
            }
            if (closed) {
                throw new IllegalStateException("proxy closed");
            }
            if (armedCut.compareAndSet(null, fresh)) {
                cutOnMulti = onMulti;
                cutOnOpcode = opcode;
                LOG.debug("proxy {} armed cut after next create", port());
                return fresh;
            }
        }
    }

    /**
     * Disarms a pending {@link #cutAfterNextCreate()} (its future is cancelled); false if none was pending.
     *
     * @return true if a cut was pending
     */
    public boolean disarmCut() {
        CompletableFuture<Void> current = armedCut.getAndSet(null);
        if (current == null) {
            return false;
        }
        current.cancel(false);
        return true;
    }

    /**
     * Whether a {@link #cutAfterNextCreate()} is armed and not yet used.
     *
     * @return true if armed
     */
    public boolean isCutArmed() {
        return armedCut.get() != null;
    }

    /**
     * Connections currently open (or held) through the proxy.
     *
     * @return the number of connections
     */
    public int openConnections() {
        synchronized (lock) {
            return links.size();
        }
    }

    /**
     * Connections accepted since the proxy started.
     *
     * @return the number of connections
     */
    public int connectionsAccepted() {
        return accepted.get();
    }

    /** Stops accepting, closes every connection, stops every thread; a pending cut completes exceptionally. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            lock.notifyAll();
        }
        closeQuietly(listener);
        cutAll();
        CompletableFuture<Void> pending = armedCut.getAndSet(null);
        if (pending != null) {
            pending.completeExceptionally(new IllegalStateException("proxy closed before any create"));
        }
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ZkProxy[" + connectString() + " -> " + target + (stalled ? ", stalled" : "")
                + (refusing ? ", refusing" : "") + "]";
    }

    // ---- internals --------------------------------------------------------------------------------------------

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("proxy {} accept failed", port(), e);
                }
                return;
            }
            accepted.incrementAndGet();
            if (refusing) {
                reset(client);
                continue;
            }
            Link link = new Link(accepted.get(), client);
            boolean connectNow;
            synchronized (lock) {
                if (closed) {
                    closeQuietly(client);
                    return;
                }
                links.add(link);
                connectNow = !stalled;
            }
            link.start(connectNow);
        }
    }

    private static boolean isCreateOp(int type) {
        return type == OP_CREATE || type == OP_CREATE2 || type == OP_CREATE_CONTAINER || type == OP_CREATE_TTL;
    }

    /** Whether a whole client frame (not the first of its connection) is a request of {@code opcode}. */
    static boolean isRequest(FrameScanner frame, int opcode) {
        return frame.headLength() >= 8 && frame.headInt(4) == opcode;
    }

    /** Whether a whole client frame (not the first of its connection) is a multi request. */
    static boolean isMultiRequest(FrameScanner frame) {
        return frame.headLength() >= 8 && frame.headInt(4) == OP_MULTI;
    }

    /** Whether a whole client frame (not the first of its connection) is a create request. */
    static boolean isCreateRequest(FrameScanner frame) {
        if (frame.headLength() < 8) {
            return false;
        }
        int type = frame.headInt(4);
        if (isCreateOp(type)) {
            return true;
        }
        // multi: RequestHeader, then MultiHeader(int type, boolean done, int err) and the op's record.
        return type == OP_MULTI && frame.headLength() >= 13 && isCreateOp(frame.headInt(8)) && frame.head(12) == 0;
    }

    /** Closes with a TCP reset rather than an orderly close: what a refused connection attempt looks like. */
    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closing anyway
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }

    /**
     * Follows ZooKeeper's length-prefixed frames across arbitrary chunks and keeps the first bytes of each frame's
     * payload. Not thread-safe: one per direction of one connection.
     */
    static final class FrameScanner {
        static final int HEAD = 16;

        private final byte[] lengthBytes = new byte[4];
        private int lengthHave;
        private int remaining = -1; // payload bytes still to come; -1 while reading the length
        private final byte[] head = new byte[HEAD];
        private int headHave;
        private long completed;     // frames completed before the current one
        private boolean complete;

        /**
         * Consumes bytes up to and including the end of the current frame, or all of them if it does not end
         * within them. Returns how many were consumed; {@link #frameComplete()} then tells whether a frame ended.
         */
        int next(byte[] b, int off, int len) {
            if (complete) {
                complete = false;
                completed++;
                headHave = 0;
            }
            int used = 0;
            while (used < len) {
                if (remaining < 0) {
                    lengthBytes[lengthHave++] = b[off + used++];
                    if (lengthHave == 4) {
                        lengthHave = 0;
                        int length = ((lengthBytes[0] & 0xff) << 24) | ((lengthBytes[1] & 0xff) << 16)
                                | ((lengthBytes[2] & 0xff) << 8) | (lengthBytes[3] & 0xff);
                        remaining = Math.max(0, length);
                        if (remaining == 0) {
                            remaining = -1;
                            complete = true;
                            return used;
                        }
                    }
                } else {
                    int take = Math.min(remaining, len - used);
                    int forHead = Math.min(take, HEAD - headHave);
                    if (forHead > 0) {
                        System.arraycopy(b, off + used, head, headHave, forHead);
                        headHave += forHead;
                    }
                    used += take;
                    remaining -= take;
                    if (remaining == 0) {
                        remaining = -1;
                        complete = true;
                        return used;
                    }
                }
            }
            return used;
        }

        /** Whether the last {@link #next} call ended a frame. */
        boolean frameComplete() {
            return complete;
        }

        /** Index of the current frame in its connection's direction: 0 for the first. */
        long frameIndex() {
            return completed;
        }

        int headLength() {
            return headHave;
        }

        byte head(int i) {
            return head[i];
        }

        int headInt(int at) {
            return ((head[at] & 0xff) << 24) | ((head[at + 1] & 0xff) << 16) | ((head[at + 2] & 0xff) << 8)
                    | (head[at + 3] & 0xff);
        }
    }

    /** One client connection and its server connection. */
    private final class Link {
        private final int id;
        private final Socket client;
        private final Object c2sLock = new Object();
        private final Object s2cLock = new Object();
        private final ByteArrayOutputStream c2sHeld = new ByteArrayOutputStream(); // guarded by c2sLock
        private final ByteArrayOutputStream s2cHeld = new ByteArrayOutputStream(); // guarded by s2cLock

        private volatile Socket server;          // null until connected upstream; set under this
        private boolean upstreamStarted;         // guarded by this
        private boolean hungUp;                  // guarded by this: one end hung up during a stall
        private volatile boolean linkClosed;     // set under this

        // The cut, set by the client->server pump before it forwards the create.
        private volatile CompletableFuture<Void> cut;
        private volatile int cutXid;

        Link(int id, Socket client) {
            this.id = id;
            this.client = client;
        }

        private String name() {
            return "zkproxy-" + port() + "-" + id;
        }

        void start(boolean connectNow) {
            try {
                client.setTcpNoDelay(true);
            } catch (IOException e) {
                closeBoth();
                return;
            }
            if (connectNow) {
                connectUpstream();
            }
            Thread c2s = new Thread(this::clientToServer, name() + "-c2s");
            c2s.setDaemon(true);
            c2s.start();
        }

        /** Connects to the server (once), starts the server->client pump and flushes held client bytes. */
        void connectUpstream() {
            synchronized (this) {
                if (upstreamStarted || linkClosed) {
                    return;
                }
                upstreamStarted = true;
            }
            Socket s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.connect(target, CONNECT_TIMEOUT_MS);
            } catch (IOException e) {
                LOG.debug("{}: cannot reach {}: {}", name(), target, e.toString());
                closeQuietly(s);
                closeBoth();
                return;
            }
            synchronized (this) {
                if (linkClosed) {
                    closeQuietly(s);
                    return;
                }
                server = s;
            }
            Thread s2c = new Thread(this::serverToClient, name() + "-s2c");
            s2c.setDaemon(true);
            s2c.start();
            flush(true);
        }

        void heal() {
            boolean close;
            synchronized (this) {
                close = hungUp;
            }
            if (close) {
                closeBoth();
                return;
            }
            if (server == null) {
                connectUpstream();
            } else {
                flush(true);
                flush(false);
            }
        }

        /** Forwards bytes in one direction, or holds them while stalled (or not yet connected upstream). */
        private void forward(boolean toServer, byte[] b, int off, int len) {
            Object dirLock = toServer ? c2sLock : s2cLock;
            ByteArrayOutputStream held = toServer ? c2sHeld : s2cHeld;
            synchronized (dirLock) {
                Socket out = toServer ? server : client;
                if (stalled || out == null) {
                    held.write(b, off, len);
                    return;
                }
                try {
                    OutputStream os = out.getOutputStream();
                    if (held.size() > 0) {
                        held.writeTo(os);
                        held.reset();
                    }
                    os.write(b, off, len);
                    os.flush();
                } catch (IOException e) {
                    closeBoth();
                }
            }
        }

        private void flush(boolean toServer) {
            forward(toServer, new byte[0], 0, 0);
        }

        /** What a pump does with each chunk it has read. */
        private interface Chunks {
            /** Handles {@code buf[0, n)}; @return false to stop pumping (the link was cut) */
            boolean take(byte[] buf, int n);
        }

        /**
         * Reads one side of the link until it hangs up (then {@link #hungUp}), handing every chunk read to
         * {@code chunks}.
         */
        private void pump(boolean fromClient, Chunks chunks) {
            byte[] buf = new byte[8192];
            InputStream in;
            try {
                in = (fromClient ? client : server).getInputStream();
            } catch (IOException e) {
                hungUp(fromClient);
                return;
            }
            while (true) {
                int n;
                try {
                    n = in.read(buf);
                } catch (IOException e) {
                    n = -1;
                }
                if (n < 0) {
                    hungUp(fromClient);
                    return;
                }
                if (!chunks.take(buf, n)) {
                    return;
                }
            }
        }

        private void clientToServer() {
            FrameScanner frames = new FrameScanner();
            pump(true, (buf, n) -> {
                int pos = 0;
                while (pos < n) {
                    int used = frames.next(buf, pos, n - pos);
                    pos += used;
                    if (frames.frameComplete() && frames.frameIndex() > 0 && armedCut.get() != null
                            && (cutOnOpcode != 0 ? isRequest(frames, cutOnOpcode)
                                    : cutOnMulti ? isMultiRequest(frames) : isCreateRequest(frames))) {
                        CompletableFuture<Void> claimed = armedCut.getAndSet(null);
                        if (claimed != null) {
                            cutAfter(claimed, frames.headInt(0), frames.headInt(4), buf, pos);
                            return false;
                        }
                    }
                }
                forward(true, buf, 0, n);
                return true;
            });
        }

        /** Forwards buf[0, end) (ending with the create's frame) and cuts the connection. */
        private void cutAfter(CompletableFuture<Void> claimed, int xid, int type, byte[] buf, int end) {
            cutXid = xid;
            cut = claimed; // from now on the server->client pump drops everything
            // The create must really reach the server: wait out a stall and a pending upstream connection.
            synchronized (lock) {
                while ((stalled || server == null) && !closed && !linkClosed) {
                    try {
                        lock.wait(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            forward(true, buf, 0, end);
            LOG.debug("{}: forwarded create (type {}, xid {}), cutting", name(), type, xid);
            closeQuietly(client);
            // Normally the server's reply closes the link (serverToClient); if it never comes, close
            // anyway after the fallback delay, on a daemon thread of its own (not the common pool).
            CompletableFuture.delayedExecutor(CUT_SERVER_CLOSE_FALLBACK_MS, TimeUnit.MILLISECONDS, task -> {
                Thread t = new Thread(task, name() + "-cut");
                t.setDaemon(true);
                t.start();
            }).execute(this::closeBoth);
            if (linkClosed) {
                claimed.complete(null);
            }
        }

        private void serverToClient() {
            FrameScanner frames = new FrameScanner();
            pump(false, (buf, n) -> {
                boolean replyToCut = false;
                int pos = 0;
                while (pos < n) {
                    pos += frames.next(buf, pos, n - pos);
                    if (cut != null && frames.frameComplete() && frames.frameIndex() > 0
                            && frames.headLength() >= 4 && frames.headInt(0) == cutXid) {
                        replyToCut = true;
                    }
                }
                if (cut != null) {
                    if (replyToCut) {
                        LOG.debug("{}: server replied to the cut create", name());
                        closeBoth();
                        return false;
                    }
                    return true; // the client must hear nothing more
                }
                forward(false, buf, 0, n);
                return true;
            });
        }

        /** One end closed its connection (or failed). While stalled the other end is told only at the heal. */
        private void hungUp(boolean clientSide) {
            synchronized (this) {
                if (linkClosed) {
                    return;
                }
                if (stalled && cut == null) {
                    hungUp = true;
                    closeQuietly(clientSide ? client : server);
                    return;
                }
            }
            closeBoth();
        }

        void closeBoth() {
            synchronized (this) {
                if (linkClosed) {
                    return;
                }
                linkClosed = true;
            }
            closeQuietly(client);
            closeQuietly(server);
            synchronized (lock) {
                links.remove(this);
            }
            CompletableFuture<Void> c = cut;
            if (c != null) {
                c.complete(null);
            }
        }
    }
}
