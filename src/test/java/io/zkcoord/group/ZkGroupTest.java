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
