package io.zkcoord.security;

import java.util.List;

/**
 * The TLS server processes the TLS tests share, started once per JVM on first use and stopped when
 * it exits: {@link #main()} needs client certificates ({@code ssl.clientAuth=need}) signed by the
 * test CA; {@link #wrongHost()} presents a certificate, from the same CA, for another host.
 *
 * <p>Thread-safe: methods synchronized.
 */
final class TlsServers {

    private static SecureServer main;
    private static SecureServer wrongHost;

    private TlsServers() {
    }

    static synchronized SecureServer main() throws Exception {
        if (main == null) {
            TestCertificates certs = TestCertificates.get();
            main = started(new SecureServer(SecureServer.tls(certs, certs.serverKeyStore, "need"), List.of()));
        }
        return main;
    }

    static synchronized SecureServer wrongHost() throws Exception {
        if (wrongHost == null) {
            TestCertificates certs = TestCertificates.get();
            wrongHost = started(new SecureServer(SecureServer.tls(certs, certs.wrongHostKeyStore, "none"), List.of()));
        }
        return wrongHost;
    }

    private static SecureServer started(SecureServer s) throws Exception {
        s.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                s.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        return s;
    }
}
