package io.zkcoord.security;

import java.nio.file.Path;
import org.apache.zookeeper.client.ZKClientConfig;

/** ZooKeeper client settings for the TLS tests: what an application would put in its client properties. */
final class TlsSettings {

    private TlsSettings() {
    }

    /**
     * @param trustStore whom the client trusts
     * @param keyStore the client's certificate and key (mutual TLS), or null
     * @return a fresh client configuration for a TLS connection
     */
    static ZKClientConfig client(Path trustStore, Path keyStore) {
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
        config.setProperty("zookeeper.ssl.trustStore.location", trustStore.toString());
        config.setProperty("zookeeper.ssl.trustStore.password", Secrets.TRUSTSTORE_PASSWORD);
        config.setProperty("zookeeper.ssl.trustStore.type", "PKCS12");
        if (keyStore != null) {
            config.setProperty("zookeeper.ssl.keyStore.location", keyStore.toString());
            config.setProperty("zookeeper.ssl.keyStore.password", Secrets.KEYSTORE_PASSWORD);
            config.setProperty("zookeeper.ssl.keyStore.type", "PKCS12");
        }
        return config;
    }
}
