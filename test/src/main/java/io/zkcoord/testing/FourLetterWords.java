package io.zkcoord.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a ZooKeeper server's own view of itself through its four-letter commands ({@code mntr}, {@code wchp},
 * {@code wchs}, {@code srvr}, ...), sent over a plain socket to one server.
 *
 * <p>The server answers only whitelisted commands: set the system property
 * {@code zookeeper.4lw.commands.whitelist=*} before an in-process server starts (see {@link #WHITELIST_PROPERTY};
 * the pom's surefire configuration sets it for every test), or {@code 4lw.commands.whitelist=*} in a
 * {@code zoo.cfg}. A command the server refuses or cannot serve yet raises {@link IllegalStateException} rather than
 * returning its explanation as if it were data.
 *
 * <p>Facts the helpers rely on (ZooKeeper 3.9):
 * <ul>
 *   <li>{@code mntr} prints {@code key<TAB>value} lines; summaries name their statistic as a prefix
 *       ({@code zk_sum_node_deleted_watch_count}).</li>
 *   <li>{@code wchp} and {@code wchs} list <em>data</em> watches only ({@code exists} / {@code getData}); a child
 *       watch never shows there, while {@code zk_watch_count} counts both kinds. So
 *       {@code watchCount() - wchsTotal()} is the number of child watches.</li>
 *   <li>Every call here opens a new connection, which the server counts: each {@code mntr} adds 1 to
 *       {@code zk_packets_received}.</li>
 * </ul>
 *
 * <p>Instances are immutable and thread-safe; every method makes one round trip.
 */
public final class FourLetterWords {

    /** The system property that whitelists four-letter commands in an in-process server. */
    public static final String WHITELIST_PROPERTY = "zookeeper.4lw.commands.whitelist";

    private static final int TIMEOUT_MS = 5_000;
    private static final Pattern WCHS_TOTAL = Pattern.compile("Total watches:\\s*(\\d+)");

    private final String host;
    private final int port;

    /**
     * A client for the server at {@code host:port}.
     *
     * @param host the server's host name or address
     * @param port the server's client port
     */
    public FourLetterWords(String host, int port) {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("host is empty");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("bad port " + port);
        }
        this.host = host;
        this.port = port;
    }

    /**
     * A client for one server given as {@code host:port} (for instance {@code TestingServer.getConnectString()}).
     * A connect string naming several servers is refused: counters are per server.
     * @param hostPort one {@code host:port}
     * @return a client for that server
     * @throws IllegalArgumentException for several servers, a chroot, or no port
     */
    public static FourLetterWords of(String hostPort) {
        HostPort server = HostPort.parse(hostPort);
        return new FourLetterWords(server.host(), server.port());
    }

    /** Sets {@link #WHITELIST_PROPERTY} to {@code *} unless already set; call it before a server starts. */
    public static void enableAllCommands() {
        if (System.getProperty(WHITELIST_PROPERTY) == null) {
            System.setProperty(WHITELIST_PROPERTY, "*");
        }
    }

    /**
     * @return the server's host
     */
    public String host() {
        return host;
    }

    /**
     * @return the server's client port
     */
    public int port() {
        return port;
    }

    /**
     * Sends a four-letter command and returns the server's whole reply (read until the server closes).
     *
     * @throws UncheckedIOException  if the server cannot be reached
     * @throws IllegalStateException if the server refuses the command (not whitelisted) or is not serving yet
     * @param command a four-letter word such as {@code mntr}
     * @return the server's whole reply
     */
    public String send(String command) {
        return send(host, port, command);
    }

    /**
     * As {@link #send(String)}, to the server at {@code host:port}.
     *
     * @param host the server's host
     * @param port the server's client port
     * @param command a four-letter word
     * @return the server's whole reply
     */
    public static String send(String host, int port, String command) {
        if (command == null || command.length() != 4) {
            throw new IllegalArgumentException("a four-letter command has four letters: " + command);
        }
        String reply;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
            socket.setSoTimeout(TIMEOUT_MS);
            OutputStream out = socket.getOutputStream();
            out.write(command.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            reply = buf.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("four-letter command " + command + " to " + host + ":" + port, e);
        }
        if (reply.contains("is not executed because it is not in the whitelist")) {
            throw new IllegalStateException("server " + host + ":" + port + " refused " + command
                    + ": set -D" + WHITELIST_PROPERTY + "=* before it starts (" + reply.trim() + ")");
        }
        if (reply.contains("not currently serving requests")) {
            throw new IllegalStateException("server " + host + ":" + port + " is not serving yet: " + reply.trim());
        }
        return reply;
    }

    /**
     * {@code mntr}: every {@code key<TAB>value} line, in the server's order.
     *
     * @return the keys and values, in the server's order
     */
    public Map<String, String> mntr() {
        return parseMntr(send("mntr"));
    }

    /**
     * One {@code mntr} value as a number (a decimal value is truncated).
     *
     * @throws IllegalStateException if the server does not report that key
     * @param key a {@code mntr} key such as {@code zk_watch_count}
     * @return its value as a number
     */
    public long mntrLong(String key) {
        return longValue(mntr(), key);
    }

    /**
     * Watch notifications the server has sent to sessions since it started: the sum of
     * {@code zk_sum_node_created_watch_count}, {@code zk_sum_node_deleted_watch_count},
     * {@code zk_sum_node_changed_watch_count} and {@code zk_sum_node_children_watch_count}, from one {@code mntr}.
     * @return the notifications sent so far
     */
    public long watchesFired() {
        Map<String, String> m = mntr();
        return longValue(m, "zk_sum_node_created_watch_count")
                + longValue(m, "zk_sum_node_deleted_watch_count")
                + longValue(m, "zk_sum_node_changed_watch_count")
                + longValue(m, "zk_sum_node_children_watch_count");
    }

    /**
     * {@code zk_packets_received}: requests received, pings included; this very {@code mntr} counts 1 too.
     *
     * @return the requests received so far
     */
    public long packetsReceived() {
        return mntrLong("zk_packets_received");
    }

    /**
     * {@code zk_watch_count}: watches currently set, data and child watches together.
     *
     * @return the watches set now
     */
    public long watchCount() {
        return mntrLong("zk_watch_count");
    }

    /**
     * The {@code srvr} line {@code Mode: ...}: {@code standalone}, {@code leader}, {@code follower}, ...
     *
     * @return the mode
     */
    public String mode() {
        for (String line : send("srvr").split("\n")) {
            if (line.startsWith("Mode:")) {
                return line.substring("Mode:".length()).trim();
            }
        }
        throw new IllegalStateException("no Mode line in srvr reply of " + host + ":" + port);
    }

    /**
     * {@code wchp}: each path with a <em>data</em> watch, mapped to the ids of the sessions watching it (child
     * watches are not listed by the server). Iteration follows the server's output order.
     * @return the data-watched paths and their sessions
     */
    public Map<String, Set<Long>> wchp() {
        return parseWchp(send("wchp"));
    }

    /**
     * The {@code Total watches:} figure of {@code wchs}: data watches only.
     *
     * @return the number of data watches
     */
    public long wchsTotal() {
        return parseWchsTotal(send("wchs"));
    }

    // ---- parsers, package-private for tests ------------------------------------------------------------------

    static Map<String, String> parseMntr(String reply) {
        Map<String, String> result = new LinkedHashMap<>();
        for (String line : reply.split("\n")) {
            int tab = line.indexOf('\t');
            if (tab > 0) {
                result.put(line.substring(0, tab).trim(), line.substring(tab + 1).trim());
            }
        }
        if (result.isEmpty()) {
            throw new IllegalStateException("not a mntr reply: " + reply);
        }
        return Collections.unmodifiableMap(result);
    }

    static Map<String, Set<Long>> parseWchp(String reply) {
        Map<String, Set<Long>> result = new LinkedHashMap<>();
        Set<Long> current = null;
        for (String raw : reply.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("/")) {
                current = result.computeIfAbsent(line, p -> new LinkedHashSet<>());
            } else if (line.startsWith("0x")) {
                if (current == null) {
                    throw new IllegalStateException("session id before any path in wchp reply: " + reply);
                }
                current.add(Long.parseUnsignedLong(line.substring(2), 16));
            } else {
                throw new IllegalStateException("unexpected line '" + line + "' in wchp reply: " + reply);
            }
        }
        Map<String, Set<Long>> frozen = new LinkedHashMap<>();
        result.forEach((path, ids) -> frozen.put(path, Collections.unmodifiableSet(ids)));
        return Collections.unmodifiableMap(frozen);
    }

    static long parseWchsTotal(String reply) {
        Matcher m = WCHS_TOTAL.matcher(reply);
        if (!m.find()) {
            throw new IllegalStateException("no 'Total watches:' in wchs reply: " + reply);
        }
        return Long.parseLong(m.group(1));
    }

    private long longValue(Map<String, String> mntr, String key) {
        String value = mntr.get(key);
        if (value == null) {
            throw new IllegalStateException("server " + host + ":" + port + " reports no mntr key " + key
                    + "; keys: " + List.copyOf(mntr.keySet()));
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            return (long) Double.parseDouble(value);
        }
    }

    @Override
    public String toString() {
        return "FourLetterWords[" + host + ":" + port + "]";
    }
}
