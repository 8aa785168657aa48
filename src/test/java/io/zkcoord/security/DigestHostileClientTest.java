package io.zkcoord.security;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.util.List;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The hostile-client matrix ({@link HostileMatrix}) with digest identities: A's clients authenticate
 * as {@code alice} and give every node under {@code /secure} an ACL of ALL for alice alone (through
 * {@code aclProvider}); B authenticates as {@code bob}, and a third client as nobody.
 */
@org.junit.jupiter.api.extension.ExtendWith(SecretsInLogs.class)
@Timeout(300)
class DigestHostileClientTest {

    static final String ALICE = "alice:" + Secrets.ALICE_PASSWORD;
    static final String BOB = "bob:" + Secrets.BOB_PASSWORD;

    @RegisterExtension
    final ServerPerTest servers = new ServerPerTest();

    private ZkClient alice() throws Exception {
        List<ACL> aliceOnly = List.of(new ACL(ZooDefs.Perms.ALL,
                new Id("digest", DigestAuthenticationProvider.generateDigest(ALICE))));
        return servers.client(ZkClient.builder().authorization("digest", ALICE.getBytes(UTF_8))
                .aclProvider(path -> path.startsWith("/secure") ? aliceOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE));
    }

    /** B (another digest identity) is refused at once on every row for every recipe; A sees nothing. */
    @Test
    void anotherIdentityGetsNowhere() throws Exception {
        ZkClient holder = alice();
        ZkClient waiter = alice();
        ZkClient bob = servers.client(ZkClient.builder().authorization("digest", BOB.getBytes(UTF_8)));
        List<HostileMatrix.Cell> cells = new HostileMatrix("/secure", holder, waiter, bob).run();
        assertTrue(cells.size() >= 40, "every row ran: " + cells.size());
    }

    /** An anonymous client (no authentication at all) fares no better than B. */
    @Test
    void anAnonymousClientGetsNowhere() throws Exception {
        ZkClient holder = alice();
        ZkClient waiter = alice();
        ZkClient anonymous = servers.client(ZkClient.builder());
        List<HostileMatrix.Cell> cells = new HostileMatrix("/secure", holder, waiter, anonymous).run();
        assertTrue(cells.size() >= 40, "every row ran: " + cells.size());
    }
}
