package io.zkcoord.examples.snippets;

// snippet:imports
import io.zkcoord.ZkClient;
import java.nio.charset.StandardCharsets;
import org.apache.zookeeper.client.ZKClientConfig;
// end:imports

/**
 * The README's connection examples: an authenticated client, and the client settings of TLS.
 * README.md shows the marked regions verbatim ({@link SnippetText}); {@link Snippets} runs them.
 */
final class Connecting {

    private Connecting() {
    }

    // snippet:authorization
    static ZkClient authenticated(String connect) {
        return ZkClient.builder()
                .connectString(connect)
                // every session authenticates with this; the recipes' nodes then get CREATOR_ALL_ACL,
                // so only this identity can touch them (set .acl(...) for another ACL)
                .authorization("digest", "orders-service:s3cret".getBytes(StandardCharsets.UTF_8))
                .build();
    }
    // end:authorization

    // snippet:tls
    static ZKClientConfig tlsSettings(String keyStore, String trustStore, String password) {
        ZKClientConfig tls = new ZKClientConfig();
        tls.setProperty("zookeeper.client.secure", "true");
        tls.setProperty("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty");
        tls.setProperty("zookeeper.ssl.keyStore.location", keyStore);
        tls.setProperty("zookeeper.ssl.keyStore.password", password);
        tls.setProperty("zookeeper.ssl.trustStore.location", trustStore);
        tls.setProperty("zookeeper.ssl.trustStore.password", password);
        return tls;
    }

    static ZkClient overTls(String connect, ZKClientConfig tls) {
        return ZkClient.builder()
                .connectString(connect)   // the servers' secureClientPort
                .clientConfig(tls)
                .build();
    }
    // end:tls
}
