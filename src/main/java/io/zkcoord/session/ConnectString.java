package io.zkcoord.session;

import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.common.PathUtils;

/**
 * A connect string checked the way ZooKeeper's client will read it ({@code host:port,...[/chroot]}),
 * so that a mistake fails in the builder's setter with a message naming it, instead of inside
 * ZooKeeper's client (whose own parser prints a stack trace and throws {@link
 * NumberFormatException} only when the client is built).
 *
 * <p>Accepted: host names and IPv4 addresses, IPv6 literals in brackets ({@code [::1]:2181}), a
 * missing port (ZooKeeper's default 2181), blank entries between commas (ZooKeeper skips them), and
 * an optional chroot that is a valid absolute ZooKeeper path.
 *
 * @param text the connect string as given
 * @param servers the servers it names, in order
 * @param chroot the chroot ({@code /app} of {@code host:2181/app}), or empty
 */
public record ConnectString(String text, List<Server> servers, String chroot) {

    private static final int DEFAULT_PORT = 2181;

    /** One server of the connect string. */
    public record Server(String host, int port) {
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /**
     * @param text the connect string
     * @return it, parsed
     * @throws IllegalArgumentException naming what is wrong and what to write instead: null or
     *     blank, no server, {@code ;} or spaces between servers (use {@code ,}), an empty host, a
     *     port that is not a number from 1 to 65535, an IPv6 literal without brackets, or a chroot
     *     that is not a valid ZooKeeper path
     */
    public static ConnectString parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("connectString must not be null or empty");
        }
        int slash = text.indexOf('/');
        String hosts = slash < 0 ? text : text.substring(0, slash);
        String chroot = slash < 0 || text.length() - slash == 1 ? "" : text.substring(slash);
        if (!chroot.isEmpty()) {
            try {
                PathUtils.validatePath(chroot);
            } catch (IllegalArgumentException e) {
                throw invalid(text, "the chroot " + chroot + " is not a valid path: " + e.getMessage());
            }
        }
        if (hosts.indexOf(';') >= 0) {
            throw invalid(text, "it has ';' between servers; use ',' between servers, not ';': '"
                    + hosts.replace(';', ',') + text.substring(hosts.length()) + "'");
        }
        List<Server> servers = new ArrayList<>();
        for (String entry : hosts.split(",")) {
            String hostPort = entry.trim();
            if (!hostPort.isEmpty()) {
                servers.add(server(text, hostPort));
            }
        }
        if (servers.isEmpty()) {
            throw invalid(text, "it names no server (expected host:port[,host:port...][/chroot])");
        }
        return new ConnectString(text, List.copyOf(servers), chroot);
    }

    private static Server server(String text, String hostPort) {
        String host;
        String port;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw invalid(text, "'" + hostPort + "' opens an IPv6 literal with '[' but never closes it");
            }
            host = hostPort.substring(1, close);
            String rest = hostPort.substring(close + 1);
            if (!rest.isEmpty() && !rest.startsWith(":")) {
                throw invalid(text, "'" + hostPort + "' has '" + rest + "' after the IPv6 literal; expected :port");
            }
            port = rest.isEmpty() ? null : rest.substring(1);
        } else {
            int colon = hostPort.indexOf(':');
            if (hostPort.chars().anyMatch(Character::isWhitespace)) {
                throw invalid(text, "'" + hostPort + "' has a space in it; use ',' between servers, not spaces: '"
                        + hostPort.replaceAll("\\s+", ",") + "'");
            }
            if (colon >= 0 && hostPort.indexOf(':', colon + 1) >= 0) {
                throw invalid(text, "'" + hostPort + "' has several ':'; write an IPv6 address in brackets, "
                        + "e.g. [::1]:2181");
            }
            host = colon < 0 ? hostPort : hostPort.substring(0, colon);
            port = colon < 0 ? null : hostPort.substring(colon + 1);
        }
        if (host.isBlank()) {
            throw invalid(text, "'" + hostPort + "' has no host name");
        }
        return new Server(host, port == null ? DEFAULT_PORT : port(text, hostPort, port));
    }

    private static int port(String text, String hostPort, String port) {
        int value;
        try {
            value = port.chars().allMatch(Character::isDigit) && port.length() <= 5 ? Integer.parseInt(port) : -1;
        } catch (NumberFormatException e) {
            value = -1;
        }
        if (value < 1 || value > 65535) {
            throw invalid(text, "the port '" + port + "' of '" + hostPort + "' is not a number from 1 to 65535");
        }
        return value;
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException("connectString '" + text + "' is not valid: " + why);
    }
}
