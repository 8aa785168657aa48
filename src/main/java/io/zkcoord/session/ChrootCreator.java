package io.zkcoord.session;

import io.zkcoord.CoordinationException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure the chroot of the connect string ({@code /app} of {@code zk1:2181/app}) exists before
 * the client reports its first session, as a namespace that is created on first use.
 *
 * <p>ZooKeeper does not create a chroot, and a client rooted there cannot create it (its {@code /}
 * is the chroot). So: one {@code exists} on the new session (one round trip when it is there);
 * if it is missing, a short-lived second connection without the chroot, with the client's own
 * authorizations, creates it and every missing parent with the client's ACL (a node someone else
 * creates meanwhile is fine), and is closed.
 *
 * <p>Stateless and thread-safe; the creation runs on a daemon thread of its own.
 */
final class ChrootCreator {

    private static final Logger log = LoggerFactory.getLogger(ChrootCreator.class);

    private ChrootCreator() {
    }

    /**
     * @param chrooted a connected handle of the client, rooted at the chroot
     * @param settings the client's settings
     * @param name the client's name, for threads and messages
     * @return completes with true once the chroot exists (or could not be checked for a reason
     *     other than the connection: the recipes then say so); with false if the connection was
     *     lost before the answer (check again once reconnected); fails with {@link
     *     CoordinationException} if it is missing and cannot be created
     */
    static CompletableFuture<Boolean> ensure(ZooKeeper chrooted, ClientSettings settings, String name) {
        String chroot = settings.chroot();
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        if (chroot.isEmpty() || chroot.equals("/")) {
            done.complete(true);
            return done;
        }
        chrooted.exists("/", false, (rc, path, ctx, stat) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.OPERATIONTIMEOUT) {
                done.complete(false); // not known: taken as there, a missing chroot would never be made
                return;
            }
            if (code != KeeperException.Code.NONODE) {
                done.complete(true); // there, or not known now: a recipe that misses it says so
                return;
            }
            Thread t = new Thread(() -> {
                try {
                    create(settings, chroot, name);
                    done.complete(true);
                } catch (InterruptedException e) {
                    done.completeExceptionally(new CoordinationException(name + ": interrupted while creating the chroot "
                            + chroot, e));
                } catch (KeeperException | IOException | RuntimeException e) {
                    done.completeExceptionally(new CoordinationException("the chroot " + chroot + " of the connect string "
                            + settings.connectString() + " does not exist and cannot be created: " + e.getMessage(), e));
                }
            }, name + "-create-chroot");
            t.setDaemon(true);
            t.start();
        }, null);
        return done;
    }

    private static void create(ClientSettings settings, String chroot, String name)
            throws IOException, InterruptedException, KeeperException {
        String servers = ConnectString.parse(settings.connectString()).servers().stream()
                .map(ConnectString.Server::toString)
                .collect(Collectors.joining(","));
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(servers, (int) settings.sessionTimeout().toMillis(), event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, false, settings.clientConfig());
        try {
            for (ClientSettings.Auth auth : settings.auths()) {
                zk.addAuthInfo(auth.scheme(), auth.credentials());
            }
            if (!connected.await(settings.connectionTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                throw new CoordinationException("no session without the chroot within "
                        + settings.connectionTimeout().toMillis() + " ms");
            }
            // Each ancestor, then the chroot itself: ZooKeeper creates one level at a time. They get
            // the ACL of the client's root, "/" as the client sees it (an aclProvider is asked for it).
            java.util.List<org.apache.zookeeper.data.ACL> acl = settings.aclFor("/");
            for (int slash = chroot.indexOf('/', 1); ; slash = chroot.indexOf('/', slash + 1)) {
                String path = slash < 0 ? chroot : chroot.substring(0, slash);
                try {
                    zk.create(path, new byte[0], acl, CreateMode.PERSISTENT);
                    log.info("{}: created {} (a node of the connect string's chroot {})", name, path, chroot);
                } catch (KeeperException.NodeExistsException e) {
                    // made by someone else, or an ancestor that was there
                }
                if (slash < 0) {
                    return;
                }
            }
        } finally {
            HandleCloser.closeInBackground(zk, true, name + "-close-chroot-handle");
        }
    }
}
