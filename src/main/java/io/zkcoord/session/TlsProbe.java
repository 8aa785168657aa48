package io.zkcoord.session;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.DelegatingSslContext;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.zkcoord.TlsConnectException;
import io.zkcoord.ZkClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;

/**
 * Finds out why a TLS client has no session. ZooKeeper's client keeps a failed TLS handshake to its
 * own log and tries the next server, again and again, so the caller of {@link
 * ZkClient.Builder#build()} would only see the connection timeout run out. This probe makes one
 * handshake with each server of the connect string the way ZooKeeper's client does (the same
 * {@link ClientX509Util} TLS context, built from the same {@link ZKClientConfig}, over Netty, to
 * the same host string and port) and names what failed. A handshake that succeeds is kept open a
 * moment, because under TLS 1.3 a server refuses a client certificate only after the client has
 * finished its side. A server that closes the handshake is asked a plain four-letter word: an
 * answer proves a plain-text port.
 *
 * <p>Nothing but the handshake is sent on the TLS connection; each probe's connection and threads
 * end before {@link #probe} returns, or soon after it if the caller is interrupted (then it returns
 * empty at once). Stateless; thread-safe.
 */
final class TlsProbe {

    /** How long a finished handshake is watched for a refusal of the client's certificate. */
    private static final long REFUSAL_WAIT_MILLIS = 500;

    private TlsProbe() {
    }

    /** @return true if {@code config} asks for TLS */
    static boolean isSecure(ZKClientConfig config) {
        return config.getBoolean(ZKClientConfig.SECURE_CLIENT);
    }

    /** What one server answered. */
    record Answer(String server, TlsConnectException.Problem problem, String detail, Throwable cause) {
    }

    /**
     * Probes every server of {@code connectString}, each within {@code budgetMillis}.
     *
     * @return the TLS failure if every server answered with one; empty if any server completed a
     *     handshake, could not be reached (the client may reach it later), or did not answer in time;
     *     empty at once if the calling thread is interrupted (its interrupt flag is set again)
     */
    static Optional<TlsConnectException> probe(String connectString, ZKClientConfig config, long budgetMillis) {
        List<InetSocketAddress> servers = new ConnectStringParser(connectString).getServerAddresses();
        SslContext context;
        try {
            context = clientContext(config);
        } catch (Exception e) {
            return Optional.of(new TlsConnectException(TlsConnectException.Problem.HANDSHAKE_FAILED,
                    "cannot set up TLS for " + connectString + " with the client's zookeeper.ssl settings: "
                            + e.getMessage(), e));
        }
        // One thread per server, of our own: a probe blocks for up to its budget, which must not
        // hold up a shared pool, and an interrupt of the caller must reach every probe.
        List<CompletableFuture<Optional<Answer>>> answers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (InetSocketAddress server : servers) {
            CompletableFuture<Optional<Answer>> answer = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    answer.complete(probe(context, server, budgetMillis));
                } catch (RuntimeException | Error e) {
                    answer.completeExceptionally(e);
                }
            },
                    "zkcoord-tls-probe-" + server.getHostString() + ":" + server.getPort());
            t.setDaemon(true);
            answers.add(answer);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        List<Answer> failures = new ArrayList<>();
        try {
            for (CompletableFuture<Optional<Answer>> a : answers) {
                Optional<Answer> answer = a.get();
                if (answer.isEmpty()) {
                    return Optional.empty();
                }
                failures.add(answer.get());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty(); // given up (the client closes): no verdict
        } catch (java.util.concurrent.ExecutionException e) {
            return Optional.empty();
        } finally {
            threads.forEach(Thread::interrupt); // ends the probes still waiting; a no-op for those done
        }
        TlsConnectException.Problem problem = failures.get(0).problem();
        boolean same = failures.stream().allMatch(f -> f.problem() == problem);
        String details = failures.stream().map(f -> f.server() + ": " + f.detail()).collect(Collectors.joining("; "));
        return Optional.of(new TlsConnectException(same ? problem : TlsConnectException.Problem.HANDSHAKE_FAILED,
                "no TLS connection to " + connectString + ": " + details, failures.get(0).cause()));
    }

    /**
     * The client's TLS context, as ZooKeeper's Netty client builds it. ZooKeeper 3.9 has a method for
     * it ({@code ClientX509Util.createNettySslContextForClient}); 3.8 has not, and its client wraps
     * the JDK {@code SSLContext} made from the same settings (trust store, key store, host-name
     * verification), which is what this does there. Looked up at run time, so that the library runs
     * on either client jar.
     */
    private static SslContext clientContext(ZKClientConfig config) throws Exception {
        try (ClientX509Util x509 = new ClientX509Util()) {
            try {
                java.lang.reflect.Method since39 = ClientX509Util.class.getMethod("createNettySslContextForClient",
                        org.apache.zookeeper.common.ZKConfig.class);
                return (SslContext) since39.invoke(x509, config);
            } catch (NoSuchMethodException zookeeper38) {
                // 3.8's client checks the host name in the SSLEngine (endpoint identification) when
                // zookeeper.ssl.hostnameVerification is on: do the same on every engine we make.
                SslContext jdk = new JdkSslContext(x509.createSSLContext(config), true, ClientAuth.NONE);
                return x509.isServerHostnameVerificationEnabled(config) ? new HostCheckingSslContext(jdk) : jdk;
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        }
    }

    /** A TLS context whose engines check the server's host name, as ZooKeeper 3.8's client does. */
    private static final class HostCheckingSslContext extends DelegatingSslContext {

        HostCheckingSslContext(SslContext context) {
            super(context);
        }

        @Override
        protected void initEngine(SSLEngine engine) {
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
    }

    /** @return the TLS failure of one server; empty if its handshake worked or it could not be reached */
    private static Optional<Answer> probe(SslContext context, InetSocketAddress server, long budgetMillis) {
        String host = server.getHostString();
        int port = server.getPort();
        String name = host + ":" + port;
        EventLoopGroup group = new NioEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "zkcoord-tls-probe");
            t.setDaemon(true);
            return t;
        });
        CompletableFuture<Throwable> refusedLater = new CompletableFuture<>();
        try {
            Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, budgetMillis))
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast("ssl", context.newHandler(ch.alloc(), host, port));
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    refusedLater.complete(cause);
                                    ctx.close();
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    refusedLater.complete(null);
                                }
                            });
                        }
                    });
            ChannelFuture connect = bootstrap.connect(host, port);
            if (!connect.await(budgetMillis) || !connect.isSuccess()) {
                return Optional.empty(); // unreachable: not a TLS question
            }
            Channel channel = connect.channel();
            SslHandler ssl = channel.pipeline().get(SslHandler.class);
            if (!ssl.handshakeFuture().await(budgetMillis)) {
                return Optional.empty(); // no answer in time: a slow server, not a refusal
            }
            if (!ssl.handshakeFuture().isSuccess()) {
                return Optional.of(classify(name, ssl.handshakeFuture().cause(), server, budgetMillis));
            }
            Throwable later;
            try {
                later = refusedLater.get(REFUSAL_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                return Optional.empty(); // still open: the server accepted us
            } finally {
                channel.close();
            }
            if (later != null && mentions(later, "certificate", "bad_certificate", "certificate_required",
                    "unknown_ca", "handshake_failure")) {
                return Optional.of(clientCertificateRefused(name, later));
            }
            return Optional.empty();
        } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Optional.empty();
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
    }

    private static Answer classify(String name, Throwable failure, InetSocketAddress server, long budgetMillis) {
        if (has(failure, CertPathBuilderException.class) || has(failure, CertPathValidatorException.class)
                || mentions(failure, "PKIX path", "unable to find valid certification path")) {
            return new Answer(name, TlsConnectException.Problem.SERVER_NOT_TRUSTED, "the server's certificate is not"
                    + " trusted: no certificate of the client's trust store (zookeeper.ssl.trustStore.location)"
                    + " signed it", failure);
        }
        if (has(failure, SSLPeerUnverifiedException.class) || mentions(failure, "subject alternative",
                "Failed to verify host", "doesn't match", "does not match")) {
            return new Answer(name, TlsConnectException.Problem.HOST_NAME_MISMATCH, "the server's certificate is"
                    + " trusted but does not name the host name or address " + server.getHostString()
                    + " (host-name verification is on; zookeeper.ssl.hostnameVerification=false turns it off)",
                    failure);
        }
        if (mentions(failure, "bad_certificate", "certificate_unknown", "certificate_required", "unknown_ca",
                "Empty client certificate")) {
            return clientCertificateRefused(name, failure);
        }
        if (!Thread.currentThread().isInterrupted() && answersPlainText(server, budgetMillis)) {
            return new Answer(name, TlsConnectException.Problem.NOT_A_TLS_PORT, "the port answers in plain text, not"
                    + " TLS: it is a plain-text clientPort; connect to the server's secureClientPort", failure);
        }
        return new Answer(name, TlsConnectException.Problem.HANDSHAKE_FAILED, "the TLS handshake failed: "
                + rootMessage(failure), failure);
    }

    private static Answer clientCertificateRefused(String name, Throwable failure) {
        return new Answer(name, TlsConnectException.Problem.CLIENT_CERTIFICATE_REFUSED, "the server refused the"
                + " client certificate (" + rootMessage(failure) + "): it is not signed by a CA the server trusts,"
                + " or none is configured (zookeeper.ssl.keyStore.location) while the server needs one", failure);
    }

    /** @return true if the port answers a plain-text four-letter word: a plain-text ZooKeeper port */
    private static boolean answersPlainText(InetSocketAddress server, long budgetMillis) {
        try (Socket socket = new Socket()) {
            int timeout = (int) Math.max(1, Math.min(budgetMillis, 2000));
            socket.connect(new InetSocketAddress(server.getHostString(), server.getPort()), timeout);
            socket.setSoTimeout(timeout);
            // Any four-letter word gets a plain-text answer, even one the server does not allow.
            socket.getOutputStream().write("isro".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            return in.read() >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean has(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean mentions(Throwable t, String... words) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            for (String w : words) {
                if (m.contains(w)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }
}
