package io.zkcoord.faults;

import io.zkcoord.CoordinationException;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.data.Stat;

/**
 * The client JVM of {@link PausedHolderFaultTest}, run as a child {@code java} process that the test
 * freezes with SIGSTOP. It has two ZooKeeper clients:
 *
 * <ul>
 *   <li><b>the lock client</b> (short session, built afresh for every round): takes the {@link ZkMutex};
 *   <li><b>the data client</b> (long session, one for the whole run): writes the guarded resource without
 *       any guard, the common set-up where the lock lives on one connection and the data goes through
 *       another.
 * </ul>
 * It reads commands on stdin, one a line, and answers each with one line on stdout (the only lines it
 * prints there; logs go to stderr):
 *
 * <ul>
 *   <li>{@code LOCK}: closes the previous lock client (in the background), builds a new one, takes the
 *       mutex and answers {@code HELD <fencing token> <lock session id> <lock session timeout ms> <data
 *       session timeout ms>} (negotiated timeouts).
 *   <li>{@code WRITE guarded <value>}: at once, {@code mutex.commitIfHeld(setData(dataPath, value, -1))};
 *       answers {@code APPLIED} or {@code REFUSED <exception class> cause=<KeeperException code or ->}.
 *   <li>{@code WRITE plain <value>}: at once, {@code setData(dataPath, value, -1)} on the data client;
 *       answers {@code APPLIED version=<n>} or {@code REFUSED <exception class> cause=<code>}.
 *   <li>{@code EXIT}, or the end of stdin: closes both clients and exits.
 * </ul>
 * Every {@code WRITE} answer ends with what the child believed just before writing: {@code held=<does this
 * thread hold the mutex>} {@code zk=<state of the lock client's ZooKeeper handle>} {@code client=<the lock
 * client's connection state>}, and {@code took=<ms from reading the command to the answer>}. The test sends
 * {@code WRITE} while the child is frozen in its stdin read, so the write runs the moment it is resumed.
 *
 * <p>Arguments: {@code <connect string> <lock path> <data path> <lock session ms> <data session ms>}.
 */
public final class ChildPausedWriter {

    private ChildPausedWriter() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: ChildPausedWriter <connect string> <lock path> <data path> <lock session ms>"
                    + " <data session ms>");
            System.exit(2);
        }
        String connectString = args[0];
        String lockPath = args[1];
        String dataPath = args[2];
        Duration lockSession = Duration.ofMillis(Long.parseLong(args[3]));
        ZkClient data = FaultFixtures.client(connectString, Duration.ofMillis(Long.parseLong(args[4])));
        ZkClient lockClient = null;
        ZkMutex mutex = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("EXIT"); line = in.readLine()) {
            long readAt = System.nanoTime();
            String[] words = line.trim().split(" ");
            if (words[0].equals("WRITE") && words.length == 3 && mutex != null) {
                byte[] value = words[2].getBytes(StandardCharsets.UTF_8);
                String answer = words[1].equals("guarded")
                        ? guarded(mutex, lockClient, dataPath, value)
                        : plain(data, mutex, lockClient, dataPath, value);
                reply(answer + " took=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - readAt));
            } else if (words[0].equals("LOCK")) {
                if (lockClient != null) {
                    closeInBackground(lockClient); // its session expired while frozen: every hold of it is lost
                }
                lockClient = FaultFixtures.client(connectString, lockSession);
                mutex = new ZkMutex(lockClient, lockPath);
                mutex.lock();
                // The data client has just been heard from: a frozen second fits well in its session.
                data.zooKeeper().exists(dataPath, false);
                reply("HELD " + mutex.fencingToken() + " " + lockClient.sessionId() + " "
                        + lockClient.session().timeoutMillis() + " " + data.session().timeoutMillis());
            } else {
                reply("ERROR unknown or untimely command: " + line);
            }
        }
        if (lockClient != null) {
            lockClient.close();
        }
        data.close();
        System.exit(0);
    }

    /** The write guarded by the lock: one multi behind a check of the mutex's node, on the lock's session. */
    private static String guarded(ZkMutex mutex, ZkClient lockClient, String dataPath, byte[] value) {
        String belief = belief(mutex, lockClient);
        try {
            mutex.commitIfHeld(List.of(Op.setData(dataPath, value, -1)));
            return "APPLIED" + belief;
        } catch (CoordinationException e) {
            String cause = e.getCause() instanceof KeeperException k ? k.code().toString() : "-";
            return "REFUSED " + e.getClass().getName() + " cause=" + cause + belief;
        } catch (RuntimeException e) {
            return "ERROR " + e.getClass().getName() + " " + oneLine(e.getMessage()) + belief;
        }
    }

    /** The unguarded write: straight through the data client, whatever the lock's state. */
    private static String plain(ZkClient data, ZkMutex mutex, ZkClient lockClient, String dataPath, byte[] value) {
        String belief = belief(mutex, lockClient);
        try {
            Stat stat = data.zooKeeper().setData(dataPath, value, -1);
            return "APPLIED version=" + stat.getVersion() + belief;
        } catch (KeeperException e) {
            return "REFUSED " + e.getClass().getName() + " cause=" + e.code() + belief;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "ERROR " + e.getClass().getName() + belief;
        } catch (RuntimeException e) {
            return "ERROR " + e.getClass().getName() + " " + oneLine(e.getMessage()) + belief;
        }
    }

    /** What the child believes just before it writes: a few reads of local state, no request. */
    private static String belief(ZkMutex mutex, ZkClient lockClient) {
        return " held=" + mutex.isHeldByCurrentThread() + " zk=" + lockClient.zooKeeper().getState()
                + " client=" + lockClient.state();
    }

    private static void reply(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace(' ', '_');
    }

    private static void closeInBackground(ZkClient client) {
        Thread t = new Thread(client::close, "close-previous-lock-client");
        t.setDaemon(true);
        t.start();
    }
}
