package io.zkcoord.lock;

import io.zkcoord.Protocol;
import io.zkcoord.ZkClient;
import io.zkcoord.queue.CuratorNames;
import io.zkcoord.queue.QueueNaming;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * Shared reads and exclusive writes across processes, in FIFO order across both modes:
 * ZooKeeper's shared-lock recipe.
 *
 * <pre>{@code
 * ZkReadWriteLock rw = new ZkReadWriteLock(client, "/locks/stock");
 * rw.readLock().lock();      // many readers at once
 * try { ... } finally { rw.readLock().unlock(); }
 * }</pre>
 *
 * <ul>
 *   <li>A reader holds when no write node stands ahead of it; otherwise it watches the <em>last</em>
 *       write node ahead of it. Readers behind a queued writer therefore wake when that writer
 *       leaves, and a writer's release wakes only the waiters right behind it.
 *   <li>A writer holds when it is first in the queue; otherwise it watches its immediate
 *       predecessor, read or write.
 *   <li>No starvation: a writer waits only for what queued before it; readers that arrive after a
 *       queued writer wait for it.
 * </ul>
 * Both sides are {@link ZkLock}s with the full contract of {@link ZkMutex}.
 *
 * <h2>Changing mode</h2>
 * <ul>
 *   <li><b>Downgrade</b>: a thread holding the write lock may take the read lock at once, then
 *       release the write lock and go on reading. A writer that queued while the write lock was
 *       held does not get in until that read hold is released (the write node is kept until then
 *       when such a writer exists). The downgraded read hold's {@link ZkLock#fencingToken()} is
 *       the write hold's, so the writer after it still gets a higher token.
 *   <li><b>Upgrade is refused</b>: a thread holding only the read lock that asks for the write lock,
 *       by any method, gets {@link IllegalMonitorStateException} at once, since waiting would wait
 *       for its own read node forever.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ZkReadWriteLock implements ReadWriteLock {

    private final ZkLock read;
    private final ZkLock write;

    /**
     * @param client the client whose session holds the locks
     * @param path the lock directory, shared by readers and writers; created on demand
     * @throws IllegalArgumentException as {@link ZkMutex#ZkMutex}
     */
    public ZkReadWriteLock(ZkClient client, String path) {
        this(client, path, Protocol.ZKCOORD);
    }

    /**
     * A read/write lock that names, orders and watches its nodes by {@code protocol}. With {@link
     * Protocol#CURATOR} it shares {@code path} with Apache Curator's {@code
     * InterProcessReadWriteLock}: nodes {@code _c_<uuid>-__WRIT__<sequence>} and {@code
     * _c_<uuid>-__READ__<sequence>}, ordered as Curator orders them; no writer holds beside anyone,
     * readers hold together, FIFO across both libraries. A writer right behind a Curator writer
     * reads the queue again when that writer leaves (Curator's downgrade may leave a read in its
     * place). This side keeps the whole contract above, downgrade included.
     *
     * @param client the client whose session holds the locks
     * @param path the lock directory, shared by readers and writers; created on demand
     * @param protocol {@link Protocol#ZKCOORD} (as {@link #ZkReadWriteLock(ZkClient, String)}), or
     *     {@link Protocol#CURATOR} while Curator processes use the path
     * @throws IllegalArgumentException as {@link ZkMutex#ZkMutex}, or if {@code protocol} is null
     */
    public ZkReadWriteLock(ZkClient client, String path, Protocol protocol) {
        QueueNaming naming = QueueNaming.of(protocol, CuratorNames.READ, CuratorNames.WRITE);
        LockEngine readEngine = new LockEngine(client, path, NodeKind.READ, naming);
        LockEngine writeEngine = new LockEngine(client, path, NodeKind.WRITE, naming);
        Side readSide = new Side(readEngine);
        Side writeSide = new Side(writeEngine);
        readEngine.bind(readSide, writeEngine);
        writeEngine.bind(writeSide, readEngine);
        this.read = readSide;
        this.write = writeSide;
    }

    /** @return the shared side */
    @Override
    public ZkLock readLock() {
        return read;
    }

    /** @return the exclusive side */
    @Override
    public ZkLock writeLock() {
        return write;
    }

    /** @return the lock directory, as given */
    public String path() {
        return read.path();
    }

    @Override
    public String toString() {
        return "ZkReadWriteLock[" + path() + "]";
    }

    /** One side of the lock. */
    private static final class Side extends EngineLock {
        Side(LockEngine engine) {
            super(engine);
        }
    }
}
