package io.zkcoord.session;

import io.zkcoord.ConnectFailedException.Problem;
import io.zkcoord.ConnectFailedException;
import io.zkcoord.ZkClient;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * Finds out why a client has no session yet, while {@link ZkClient.Builder#build()} still waits:
 * ZooKeeper's client keeps what went wrong to its own log, so each server of the connect string is
 * asked again, once, the way the client reaches it: its name resolved, then a TCP connection opened
 * (and closed at once). {@link #failure} turns whatever answers came in by then into a {@link
 * ConnectFailedException}.
 *
 * <p>Each server is probed on a daemon thread of its own, which ends once the name lookup and the
 * connection attempt (bounded by the budget) end. Thread-safe.
 */
final class ConnectProbe {

    /**
     * Below this, a connection attempt (the session timeout divided by the number of servers,
     * ZooKeeper's client's own rule) is too short for a handshake that crosses a network.
     */
    static final long SHORT_ATTEMPT_MILLIS = 100;

    /** What one server answered. */
    enum Answer { ACCEPTED, REFUSED, NO_ANSWER, UNRESOLVED }

    /** The answer of one server, with what was seen, for the message. */
    record Result(ConnectString.Server server, Answer answer, String detail) {
    }

    private final List<ConnectString.Server> servers;
    private final List<CompletableFuture<Result>> results = new ArrayList<>();

    private ConnectProbe(List<ConnectString.Server> servers) {
        this.servers = servers;
    }

    /**
     * Starts probing every server.
     *
     * @param servers the servers of the connect string
     * @param budget how long a connection attempt may take at most
     * @param threadName names the probe threads
     * @return the probe, running
     */
    static ConnectProbe start(List<ConnectString.Server> servers, Duration budget, String threadName) {
        ConnectProbe probe = new ConnectProbe(servers);
        int timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, budget.toMillis()));
        for (ConnectString.Server server : servers) {
            CompletableFuture<Result> result = new CompletableFuture<>();
            probe.results.add(result);
            Thread t = new Thread(() -> result.complete(probe(server, timeoutMillis)), threadName);
            t.setDaemon(true);
            t.start();
        }
        return probe;
    }

    private static Result probe(ConnectString.Server server, int timeoutMillis) {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(server.host());
        } catch (UnknownHostException e) {
            return new Result(server, Answer.UNRESOLVED, "the host name does not resolve");
        } catch (RuntimeException e) {
            return new Result(server, Answer.UNRESOLVED, "the host name cannot be looked up: " + e);
        }
        Result best = null;
        for (InetAddress address : addresses) {
            Result r = connect(server, new InetSocketAddress(address, server.port()), timeoutMillis);
            if (best == null || r.answer().compareTo(best.answer()) < 0) {
                best = r;
            }
            if (best.answer() == Answer.ACCEPTED) {
                break;
            }
        }
        return best != null ? best : new Result(server, Answer.UNRESOLVED, "the host name has no address");
    }

    private static Result connect(ConnectString.Server server, InetSocketAddress address, int timeoutMillis) {
        try (Socket socket = new Socket()) {
            socket.connect(address, timeoutMillis);
            return new Result(server, Answer.ACCEPTED, "accepted the connection (" + address + ")");
        } catch (ConnectException e) {
            return new Result(server, Answer.REFUSED, "connection refused (" + address + ")");
        } catch (SocketTimeoutException e) {
            return new Result(server, Answer.NO_ANSWER, "no answer to a connection within " + timeoutMillis
                    + " ms (" + address + ")");
        } catch (IOException | RuntimeException e) {
            return new Result(server, Answer.NO_ANSWER, e.getMessage() + " (" + address + ")");
        }
    }

    /**
     * @param connectString the connect string, for the message
     * @param waitedMillis how long the client waited for a session
     * @param sessionTimeout the session timeout asked for
     * @param handleProblem what ZooKeeper's client itself reported (a failed authentication), or null
     * @param cause the error to attach, or null
     * @return the failure, with what each server answered by now
     */
    ConnectFailedException failure(String connectString, long waitedMillis, Duration sessionTimeout,
            String handleProblem, Throwable cause) {
        List<Result> known = new ArrayList<>();
        List<String> details = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            Result r = results.get(i).getNow(null);
            if (r != null) {
                known.add(r);
            }
            details.add(servers.get(i) + ": " + (r == null ? "no answer yet" : r.detail()));
        }
        long attemptMillis = sessionTimeout.toMillis() / servers.size();
        Problem problem;
        String what;
        if (handleProblem != null) {
            problem = Problem.SETTING_REFUSED;
            what = "the server refused the session: " + handleProblem;
        } else if (any(known, Answer.ACCEPTED) && attemptMillis < SHORT_ATTEMPT_MILLIS) {
            problem = Problem.SETTING_REFUSED;
            what = "the session timeout asked for (" + sessionTimeout.toMillis() + " ms) is too short: ZooKeeper's "
                    + "client gives up each connection attempt after the session timeout divided by the number of "
                    + "servers (" + attemptMillis + " ms), before a server can answer; ask for seconds (servers grant "
                    + "at least 2 ticks, 4 s with the default tickTime)";
        } else if (any(known, Answer.ACCEPTED)) {
            problem = Problem.TIMEOUT;
            what = "timed out: a server accepted the connection but established no session (a silent or overloaded "
                    + "server, or not a ZooKeeper client port, such as a TLS port without TLS settings)";
        } else if (any(known, Answer.REFUSED)) {
            problem = Problem.CONNECTION_REFUSED;
            what = "connection refused: nothing listens on " + (servers.size() == 1 ? "the port" : "the ports");
        } else if (known.size() == servers.size() && known.stream().allMatch(r -> r.answer() == Answer.UNRESOLVED)) {
            problem = Problem.UNKNOWN_HOST;
            what = servers.size() == 1 ? "the host name does not resolve" : "no host name resolves";
        } else {
            problem = Problem.TIMEOUT;
            what = "timed out: no server answered";
        }
        return new ConnectFailedException(problem, "no ZooKeeper session at " + connectString + " within "
                + waitedMillis + " ms: " + what + " (" + details.stream().collect(Collectors.joining("; ")) + ")",
                cause);
    }

    private static boolean any(List<Result> results, Answer answer) {
        return results.stream().anyMatch(r -> r.answer() == answer);
    }
}
