package io.zkcoord.security;

import io.zkcoord.testing.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

/**
 * A ZooKeeper ensemble of {@link SecureServer} processes on 127.0.0.1 whose clients connect over
 * TLS: each server has a {@code secureClientPort} (Netty) that needs a client certificate of the
 * test CA and presents the test server certificate, which names 127.0.0.1, so clients verify host
 * names as they do by default. Servers talk to each other over TLS too ({@code sslQuorum}, with the
 * same key and trust stores, host names verified). Each server keeps a plain-text {@code clientPort}
 * for four-letter words ({@code srvr}, {@code cons}) and for the test's tools; the clients under
 * test are given the secure ports only.
 *
 * <p>Thread-safe: the server list is fixed, and each server is thread-safe.
 */
final class SecureEnsemble implements AutoCloseable {

    /** Elections take about a second with ticks of 500 ms (the servers' {@code tickTime}). */
    private static final int INIT_LIMIT_TICKS = 20;
    private static final int SYNC_LIMIT_TICKS = 5;

    private final List<SecureServer> servers;

    /** The three-server ensemble of {@link #shared}; guarded by the class. */
    private static SecureEnsemble shared;

    private SecureEnsemble(List<SecureServer> servers) {
        this.servers = List.copyOf(servers);
    }

    /**
     * The three-server ensemble the ensemble tests share ({@link TlsNoQuorumTest}, {@link
     * TlsEnsembleFaultTest}): started once per JVM on first use (starting one takes about a minute
     * on a busy 2-core machine) and stopped when the JVM exits. Each call first starts again every
     * server a test killed and waits for the three to form a quorum, so every caller finds all
     * three serving. Tests using it must use paths of their own.
     *
     * @throws IOException if a server cannot start or the quorum does not form within {@code within}
     */
    static synchronized SecureEnsemble shared(TestCertificates certs, Duration within)
            throws IOException, InterruptedException {
        if (shared == null) {
            SecureEnsemble e = start(certs, 3, within);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    e.close();
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                }
            }));
            shared = e;
            return e;
        }
        List<SecureServer> stopped = shared.servers.stream().filter(s -> !s.isRunning()).toList();
        ExecutorService starting = Executors.newFixedThreadPool(Math.max(1, stopped.size()));
        try {
            // Each start() returns once its server serves, which may need the others: all start together.
            List<Future<?>> started = new ArrayList<>();
            for (SecureServer s : stopped) {
                started.add(starting.submit(() -> {
                    s.start();
                    return null;
                }));
            }
            for (Future<?> f : started) {
                f.get();
            }
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IOException("a server of the shared ensemble did not start again", e.getCause());
        } finally {
            starting.shutdownNow();
        }
        shared.awaitQuorum(shared.servers, within);
        return shared;
    }

    /**
     * Starts {@code size} servers at once (each is a JVM: started one after another they would take
     * {@code size} times as long) and waits until one leads and the others follow.
     *
     * @throws IOException if a server cannot start or the quorum does not form within {@code within};
     *     the servers started are stopped
     */
    static SecureEnsemble start(TestCertificates certs, int size, Duration within)
            throws IOException, InterruptedException {
        // Four ports per server, all distinct: held open together while chosen, freed just before start.
        List<ServerSocket> reserved = new ArrayList<>();
        try {
            for (int i = 0; i < 4 * size; i++) {
                reserved.add(new ServerSocket(0, 1, InetAddress.getByName(SecureServer.HOST)));
            }
        } finally {
            for (ServerSocket s : reserved) {
                s.close();
            }
        }
        Map<String, String> settings = SecureServer.tls(certs, certs.serverKeyStore, "need");
        settings.put("initLimit", Integer.toString(INIT_LIMIT_TICKS));
        settings.put("syncLimit", Integer.toString(SYNC_LIMIT_TICKS));
        settings.putAll(quorumTls(certs));
        for (int i = 0; i < size; i++) {
            settings.put("server." + (i + 1), SecureServer.HOST + ":" + reserved.get(4 * i + 2).getLocalPort() + ":"
                    + reserved.get(4 * i + 3).getLocalPort());
        }
        List<String> jvmArgs = List.of("-Dlogback.configurationFile=" + serverLogging());
        List<SecureServer> servers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            servers.add(new SecureServer(i + 1, reserved.get(4 * i).getLocalPort(),
                    reserved.get(4 * i + 1).getLocalPort(), settings, jvmArgs));
        }
        SecureEnsemble ensemble = new SecureEnsemble(servers);
        ExecutorService starting = Executors.newFixedThreadPool(size);
        try {
            // Each start() returns once its server serves, which needs a quorum: all must start together.
            List<Future<?>> started = new ArrayList<>();
            for (SecureServer s : servers) {
                started.add(starting.submit(() -> {
                    s.start();
                    return null;
                }));
            }
            for (Future<?> f : started) {
                f.get();
            }
            ensemble.awaitQuorum(servers, within);
            for (SecureServer s : servers) {
                if (!s.log().contains("Using TLS encrypted quorum communication")) {
                    throw new IOException("server " + s.id + " does not use quorum TLS:\n" + s.logTail());
                }
            }
        } catch (java.util.concurrent.ExecutionException e) {
            ensemble.close();
            throw new IOException("a server of the ensemble did not start", e.getCause());
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            ensemble.close();
            throw e;
        } finally {
            starting.shutdownNow();
        }
        return ensemble;
    }

    /**
     * A logging setup for the servers: warnings, and the quorum peer's start-up lines, which say
     * whether quorum traffic is encrypted (the test class path's setup shows ZooKeeper's errors only).
     *
     * @return the file, deleted when the JVM exits
     */
    private static Path serverLogging() throws IOException {
        Path file = Files.createTempFile("zkcoord-ensemble-logback", ".xml");
        file.toFile().deleteOnExit();
        Files.writeString(file, String.join("\n",
                "<configuration>",
                "  <appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">",
                "    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n</pattern></encoder>",
                "  </appender>",
                "  <logger name=\"org.apache.zookeeper.server.quorum.QuorumPeer\" level=\"INFO\"/>",
                "  <root level=\"WARN\"><appender-ref ref=\"OUT\"/></root>",
                "</configuration>"), StandardCharsets.UTF_8);
        return file;
    }

    /** The servers' settings for TLS between them: their own key, the test CA, host names verified. */
    private static Map<String, String> quorumTls(TestCertificates certs) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("sslQuorum", "true");
        s.put("ssl.quorum.keyStore.location", certs.serverKeyStore.toString());
        s.put("ssl.quorum.keyStore.password", Secrets.KEYSTORE_PASSWORD);
        s.put("ssl.quorum.keyStore.type", "PKCS12");
        s.put("ssl.quorum.trustStore.location", certs.trustStore.toString());
        s.put("ssl.quorum.trustStore.password", Secrets.TRUSTSTORE_PASSWORD);
        s.put("ssl.quorum.trustStore.type", "PKCS12");
        return s;
    }

    List<SecureServer> servers() {
        return servers;
    }

    /** @return the TLS connect string naming every server's {@code secureClientPort} */
    String secureConnectString() {
        return servers.stream().map(SecureServer::secureConnectString).collect(Collectors.joining(","));
    }

    /** @return the plain-text connect string naming every server's {@code clientPort} */
    String plainConnectString() {
        return servers.stream().map(SecureServer::plainConnectString).collect(Collectors.joining(","));
    }

    /** @return the server that says it leads ({@code srvr}), if one does */
    Optional<SecureServer> leader() {
        return servers.stream().filter(s -> s.isRunning() && "leader".equals(s.mode())).findFirst();
    }

    /** @return the servers whose process runs */
    List<SecureServer> running() {
        return servers.stream().filter(SecureServer::isRunning).toList();
    }

    /**
     * Waits until one of {@code serving} leads and every other one follows.
     *
     * @return the leader
     * @throws IOException naming each server's mode, with the ends of their logs, after {@code within}
     */
    SecureServer awaitQuorum(List<SecureServer> serving, Duration within) throws IOException, InterruptedException {
        // Every 100 ms: each look sends srvr to every server.
        boolean formed = Await.within(within, Duration.ofMillis(100), () -> {
            List<String> modes = serving.stream().map(SecureServer::mode).toList();
            return modes.stream().filter("leader"::equals).count() == 1
                    && modes.stream().filter("follower"::equals).count() == serving.size() - 1;
        });
        if (!formed) {
            throw new IOException("no quorum among " + describe(serving) + " within " + within.toMillis() + " ms\n"
                    + serving.stream().map(s -> "--- server " + s.id + ":\n" + s.logTail())
                            .collect(Collectors.joining("\n")));
        }
        return leader().orElseThrow(() -> new IOException("the leader stopped leading: " + describe(serving)));
    }

    /** @return the ids of the sessions connected to any running server's plain-text client port */
    Set<Long> plainSessions() {
        Set<Long> ids = new HashSet<>();
        for (SecureServer s : running()) {
            ids.addAll(s.plainSessions());
        }
        return ids;
    }

    /** @return each server's id and mode, for messages */
    static String describe(List<SecureServer> servers) {
        return servers.stream().map(s -> "s" + s.id + "=" + (s.isRunning() ? s.mode() : "killed"))
                .collect(Collectors.joining(" "));
    }

    /** Stops every server (in parallel: each may take a moment to shut down) and deletes their files. */
    @Override
    public void close() throws InterruptedException {
        List<Thread> closing = new ArrayList<>();
        for (SecureServer s : servers) {
            Thread t = new Thread(() -> {
                try {
                    s.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "close-server-" + s.id);
            t.start();
            closing.add(t);
        }
        for (Thread t : closing) {
            t.join();
        }
    }
}
