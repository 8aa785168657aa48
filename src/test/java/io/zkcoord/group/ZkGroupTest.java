package io.zkcoord.group;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Group membership against a real server: join order, data, duplicates, leaving, rejoining after expiry. */
@Timeout(120)
class ZkGroupTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private TestingServer server;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterEach
    void stop() throws Exception {
        Collections.reverse(open);
        for (AutoCloseable c : open) {
            c.close();
        }
        server.close();
    }

    private ZkClient client() {
        ZkClient c = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(4)).build();
        open.add(c);
        return c;
    }

    private ZkGroup group(ZkClient c, String id, String data) {
        ZkGroup g = new ZkGroup(c, "/groups/g", id, data == null ? null : data.getBytes(StandardCharsets.UTF_8));
        open.add(g);
        return g;
    }

    private static org.apache.zookeeper.data.Stat stat(ZkClient c, String path) {
        try {
            return c.call(path, zk -> zk.exists(path, false));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> ids(List<Member> members) {
        return members.stream().map(Member::id).toList();
    }

    /** Members appear in join order with their data and session; listeners hear each view; leaving is seen. */
    @Test
    void joinOrderDataAndLeaving() {
        ZkClient ca = client();
        ZkClient cb = client();
        ZkGroup a = group(ca, "a", "10.0.0.1:80");
        List<List<String>> heard = Collections.synchronizedList(new ArrayList<>());
        a.addListener(members -> heard.add(ids(members)));
        a.join();
        a.join(); // idempotent
        ZkGroup b = group(cb, "worker b/ü", null);
        b.join();
        Await.until("a sees both", WAIT, () -> ids(a.members()).equals(List.of("a", "worker b/ü")));
        Await.until("b sees both", WAIT, () -> ids(b.members()).equals(List.of("a", "worker b/ü")));
        Member first = b.members().get(0);
        assertArrayEquals("10.0.0.1:80".getBytes(StandardCharsets.UTF_8), first.data());
        assertEquals(ca.sessionId(), first.sessionId());
        assertEquals(0, b.members().get(1).data().length);
        b.close();
        Await.until("a sees b leave", WAIT, () -> ids(a.members()).equals(List.of("a")));
        Await.until("listener heard every view", WAIT,
                () -> heard.equals(List.of(List.of("a"), List.of("a", "worker b/ü"), List.of("a"))));
    }

    /** A second joiner with the same id gets DuplicateMemberException; the first stays; nothing extra is left. */
    @Test
    void duplicateIdIsRefused() throws Exception {
        ZkClient ca = client();
        ZkClient cb = client();
        ZkGroup a = group(ca, "same", "first");
        a.join();
        ZkGroup b = group(cb, "same", "second");
        DuplicateMemberException e = assertThrows(DuplicateMemberException.class, b::join);
        assertTrue(e.getMessage().contains("same") && e.getMessage().contains("/groups/g"), e.getMessage());
        Await.until("one member", WAIT, () -> a.members().size() == 1);
        assertArrayEquals("first".getBytes(StandardCharsets.UTF_8), a.members().get(0).data());
        assertEquals(List.of("m-same"), ca.call("/groups/g", zk -> zk.getChildren("/groups/g", false)));
        a.close();
        b.join(); // the id is free again: the same object may join now
        Await.until("b is the member", WAIT, () -> ids(b.members()).equals(List.of("same")) && b.members().get(0).sessionId() == cb.sessionId());
    }

    /** A member whose session expires leaves; its client joins again in the new session, by itself. */
    @Test
    void rejoinsInEveryNewSession() throws Exception {
        ZkClient ca = client();
        ZkClient cb = client();
        ZkGroup a = group(ca, "a", null);
        ZkGroup b = group(cb, "b", null);
        a.join();
        b.join();
        Await.until("a sees both", WAIT, () -> a.members().size() == 2);
        long oldSession = cb.sessionId();
        SessionExpiry.expireOnServer(cb.zooKeeper(), server.getConnectString(), WAIT);
        Await.until("b back in a new session", WAIT, () -> a.members().size() == 2
                && a.members().get(1).id().equals("b") && a.members().get(1).sessionId() != oldSession
                && a.members().get(1).sessionId() == cb.sessionId());
        assertNotEquals(oldSession, cb.sessionId());
        Await.until("b's own view is whole again", WAIT, () -> ids(b.members()).equals(List.of("a", "b")));
    }

    /** A group that only listens (never joined) goes on following the group after its own session expired. */
    @Test
    void listenerOnlyGroupFollowsAfterItsSessionExpired() throws Exception {
        ZkClient ca = client();
        ZkClient co = client();
        ZkGroup a = group(ca, "a", null);
        a.join();
        ZkGroup observer = group(co, "observer", null);
        List<List<String>> heard = Collections.synchronizedList(new ArrayList<>());
        observer.addListener(members -> heard.add(ids(members)));
        Await.until("the observer sees a", WAIT, () -> ids(observer.members()).equals(List.of("a")));
        long oldSession = co.sessionId();
        SessionExpiry.expireOnServer(co.zooKeeper(), server.getConnectString(), WAIT);
        Await.until("the observer's client in a new session", WAIT, () -> co.sessionId() != oldSession && co.state().isConnected());
        ZkGroup b = group(client(), "b", null);
        b.join();
        Await.until("the observer sees b join", WAIT, () -> ids(observer.members()).equals(List.of("a", "b")));
        Await.until("its listener heard it", WAIT, () -> heard.contains(List.of("a", "b")));
    }

    /** A group whose join was refused as a duplicate, but that listens, goes on following the group after its session expired. */
    @Test
    void refusedDuplicateStillFollowsAfterItsSessionExpired() throws Exception {
        ZkClient ca = client();
        ZkClient cd = client();
        group(ca, "same", null).join();
        ZkGroup refused = group(cd, "same", null);
        refused.addListener(members -> { });
        assertThrows(DuplicateMemberException.class, refused::join);
        Await.until("the refused group sees the member", WAIT, () -> ids(refused.members()).equals(List.of("same")));
        long oldSession = cd.sessionId();
        SessionExpiry.expireOnServer(cd.zooKeeper(), server.getConnectString(), WAIT);
        Await.until("its client in a new session", WAIT, () -> cd.sessionId() != oldSession && cd.state().isConnected());
        group(client(), "b", null).join();
        Await.until("the refused group sees b join", WAIT, () -> ids(refused.members()).equals(List.of("same", "b")));
    }

    /** A listener added while a slow listener holds up the group's events hears each view once, in order, from where it joined. */
    @Test
    void listenerAddedBehindQueuedViewsHearsEachOnce() throws Exception {
        ZkGroup a = group(client(), "a", null);
        AtomicBoolean block = new AtomicBoolean();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        a.addListener(members -> {
            if (members.size() == 2 && block.compareAndSet(true, false)) {
                blocked.countDown();
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        a.join();
        Await.until("a sees itself", WAIT, () -> ids(a.members()).equals(List.of("a")));
        block.set(true);
        group(client(), "b", null).join();
        assertTrue(blocked.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the slow listener hears b join (and holds up the events)");
        List<List<String>> heard = Collections.synchronizedList(new ArrayList<>());
        a.addListener(members -> heard.add(ids(members))); // queued behind the slow listener
        group(client(), "c", null).join();
        Await.until("a's view has c", WAIT, () -> ids(a.members()).equals(List.of("a", "b", "c")));
        unblock.countDown();
        Await.until("the late listener heard two views", WAIT, () -> heard.size() >= 2);
        assertEquals(List.of(List.of("a", "b"), List.of("a", "b", "c")), heard);
    }

    /**
     * A joined member whose node goes while its session lives (deleted by hand, or by a closed
     * group of the same id and session whose leaving went on in the background) makes it again.
     */
    @Test
    void joinedMemberWhoseNodeGoesJoinsAgain() throws Exception {
        ZkClient ca = client();
        ZkClient admin = client();
        ZkGroup a = group(ca, "a", "data");
        a.join();
        Await.until("a sees itself", WAIT, () -> ids(a.members()).equals(List.of("a")));
        admin.call("/groups/g/m-a", zk -> {
            zk.delete("/groups/g/m-a", -1);
            return null;
        });
        Await.until("a is a member again", WAIT, () -> {
            org.apache.zookeeper.data.Stat stat = stat(admin, "/groups/g/m-a");
            return stat != null && stat.getEphemeralOwner() == ca.sessionId()
                    && ids(a.members()).equals(List.of("a")) && a.members().get(0).sessionId() == ca.sessionId();
        });
    }

    /** A second group of the same id on the same client (one session) is a duplicate too; the first stays the member. */
    @Test
    void sameIdTwiceOnOneClientIsRefused() throws Exception {
        ZkClient ca = client();
        ZkGroup first = group(ca, "a", null);
        first.join();
        ZkGroup second = group(ca, "a", null);
        assertThrows(DuplicateMemberException.class, second::join);
        first.close();
        Await.until("the first left", WAIT, () -> stat(ca, "/groups/g/m-a") == null);
        second.join(); // the id is free again
        Await.until("the second is the member", WAIT, () -> ids(second.members()).equals(List.of("a")));
        assertEquals(ca.sessionId(), stat(ca, "/groups/g/m-a").getEphemeralOwner());
    }

    /** Bad arguments fail at once; a closed group cannot join. */
    @Test
    void badArguments() {
        ZkClient c = client();
        assertThrows(IllegalArgumentException.class, () -> new ZkGroup(null, "/g", "a", null));
        assertThrows(IllegalArgumentException.class, () -> new ZkGroup(c, "g", "a", null));
        assertThrows(IllegalArgumentException.class, () -> new ZkGroup(c, "/g", "", null));
        assertThrows(IllegalArgumentException.class, () -> new ZkGroup(c, "/g", "a", new byte[65 * 1024]));
        ZkGroup g = group(c, "a", null);
        g.close();
        assertThrows(IllegalStateException.class, g::join);
    }
}
