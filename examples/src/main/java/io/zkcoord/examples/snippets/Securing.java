package io.zkcoord.examples.snippets;

import io.zkcoord.NotAuthorizedException;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * docs/security.md's examples: per-path ACLs, and what another identity gets.
 * The document shows the marked regions verbatim ({@link SnippetText}); {@link Snippets} runs them.
 */
final class Securing {

    private Securing() {
    }

    // snippet:acl-provider
    static ZkClient billingService(String connect) throws NoSuchAlgorithmException {
        Id billing = new Id("digest", DigestAuthenticationProvider.generateDigest("billing:b1ll-s3cret"));
        List<ACL> billingOnly = List.of(new ACL(ZooDefs.Perms.ALL, billing));
        return ZkClient.builder()
                .connectString(connect)
                .authorization("digest", "billing:b1ll-s3cret".getBytes(StandardCharsets.UTF_8))
                // every node the recipes make under /locks/billing (directories, missing parents,
                // queue nodes) is billing's alone; the rest stays open
                .aclProvider(path -> path.startsWith("/locks/billing") ? billingOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE)
                .build();
    }
    // end:acl-provider

    // snippet:not-authorized
    static boolean tryAsAnotherService(ZkClient otherService) throws InterruptedException {
        ZkMutex invoices = new ZkMutex(otherService, "/locks/billing/invoices");
        try {
            return invoices.tryLock(30, TimeUnit.SECONDS);
        } catch (NotAuthorizedException e) {
            // at once, not after 30 s: "not authorized (NOAUTH): the ACL of /locks/billing/invoices
            // does not let this client's identities create a node in it (needs CREATE)"
            return false;
        }
    }
    // end:not-authorized
}
