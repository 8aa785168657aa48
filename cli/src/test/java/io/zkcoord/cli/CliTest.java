package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.inspect.Inspector;
import io.zkcoord.inspect.QueueSnapshot;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code zkcoord} command as a user runs it: the built jar in a child process ({@code java -jar
 * target/zkcoord.jar}) against a real ZooKeeper server in this JVM. What the commands it runs see
 * and do is observed through files they write in the test's folder.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CliTest extends CliFixture {

    /** The command gets the fencing token and the path in its environment and zkcoord's stdin; its status is zkcoord's. */
    @Test
    void runPassesTokenStdinAndExitStatus() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--lock", "/cli/status", "--",
                "sh", "-c", "read line; echo \"token=$ZKCOORD_FENCING_TOKEN path=$ZKCOORD_LOCK_PATH got=$line\"; exit 7");
        try (OutputStream stdin = p.process().getOutputStream()) {
            stdin.write("hello\n".getBytes(StandardCharsets.UTF_8));
        }
        assertEquals(7, p.exitStatus(), p.toString());
        String out = p.out().trim();
        assertTrue(out.matches("token=[1-9][0-9]* path=/cli/status got=hello"), out);
        assertEquals("", p.err());
        assertTrue(Inspector.inspect(observer, "/cli/status").entries().isEmpty(), "released");

        ZkcoordProcess missing = start("run", connect(), "--lock", "/cli/status", "--", "no-such-command-here");
        assertEquals(127, missing.exitStatus(), missing.toString());
        assertTrue(missing.err().startsWith("zkcoord: cannot run no-such-command-here"), missing.err());
    }

    /**
     * A second run on the same lock waits while the first holds, then runs after it (its command
     * sees the first command's completion); meanwhile {@code inspect} shows the holder and the
     * waiter, as a table and as JSON.
     */
    @Test
    void secondRunWaitsThenRunsAndInspectShowsBoth() throws Exception {
        ZkcoordProcess a = start("run", connect(), "--lock", "/cli/nightly", "--", "sh", "-c",
                "echo $ZKCOORD_FENCING_TOKEN > token-a; while [ ! -f go-a ]; do sleep 0.05; done; touch done-a");
        long tokenA = awaitNumber("token-a");
        ZkcoordProcess b = start("run", connect(), "--lock", "/cli/nightly", "--", "sh", "-c",
                "test -f done-a && echo $ZKCOORD_FENCING_TOKEN > token-b");
        await("the second run queued", () -> queue("/cli/nightly").entries().size() == 2);

        ZkcoordProcess table = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/nightly");
        assertEquals(0, table.exitStatus(), table.toString());
        List<String> lines = table.out().lines().toList();
        assertEquals(4, lines.size(), table.out());
        assertTrue(lines.get(0).startsWith("/cli/nightly: 1 holding, 1 waiting"), lines.get(0));
        assertTrue(lines.get(1).startsWith("STATE"), lines.get(1));
        assertRow(lines.get(2), "HOLDING", "lock", Long.toString(tokenA), Long.toString(a.pid()));
        assertRow(lines.get(3), "waiting", "lock", Long.toString(b.pid()));

        ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect(), "/cli/nightly", "--json");
        assertEquals(0, json.exitStatus(), json.toString());
        assertTrue(json.out().contains("\"holding\":true,\"sequence\":0,\"fencingToken\":" + tokenA), json.out());
        assertTrue(json.out().contains("\"ownerPid\":" + a.pid()), json.out());
        assertTrue(json.out().contains("\"holding\":false"), json.out());
        assertFalse(json.out().contains("0x" + Long.toHexString(tokenA)), "tokens are decimal only: " + json.out());

        assertTrue(b.process().isAlive(), "the second run waits");
        assertFalse(Files.exists(dir.resolve("token-b")));
        Files.createFile(dir.resolve("go-a"));
        assertEquals(0, a.exitStatus(), a.toString());
        assertEquals(0, b.exitStatus(), b.toString());
        long tokenB = Long.parseLong(Files.readString(dir.resolve("token-b")).trim());
        assertTrue(tokenB > tokenA, tokenB + " > " + tokenA);
    }

    /** Not acquired within --wait: exit 75 and the command never starts. */
    @Test
    void waitExpiresWithoutStartingTheCommand() throws Exception {
        ZkcoordProcess holder = start("run", connect(), "--write", "/cli/busy", "--", "sh", "-c",
                "touch holding; while [ ! -f go ]; do sleep 0.05; done");
        awaitFile("holding");
        ZkcoordProcess late = ZkcoordProcess.run(dir, "run", connect(), "--read", "/cli/busy", "--wait", "500ms", "--",
                "touch", "never");
        assertEquals(75, late.exitStatus(), late.toString());
        assertFalse(Files.exists(dir.resolve("never")), "the command did not start");
        assertEquals(1, late.err().lines().count(), late.err());
        assertTrue(late.err().startsWith("zkcoord: read lock /cli/busy not acquired within 500ms"), late.err());
        assertEquals(1, queue("/cli/busy").entries().size(), "the late node is gone");
        Files.createFile(dir.resolve("go"));
        assertEquals(0, holder.exitStatus(), holder.toString());
    }

    /**
     * The holder's session expires on the server (zkcoord frozen with SIGSTOP past its session
     * timeout, as a long GC pause would; its node is seen gone) and it resumes: the command gets
     * SIGTERM and exits; zkcoord exits 76.
     */
    @Test
    void sessionExpiredOnServerSendsSigterm() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--session-timeout", "2s", "--grace", "5s", "--lock", "/cli/expiry",
                "--", "sh", "-c", "trap 'echo TERM >> log; exit 143' TERM; echo $$ > pid; while true; do sleep 0.05; done");
        long commandPid = expireWhileFrozen(p, "/cli/expiry");
        assertEquals(76, p.exitStatus(), p.toString());
        assertEquals("TERM\n", Files.readString(dir.resolve("log")));
        assertFalse(ProcessHandle.of(commandPid).map(ProcessHandle::isAlive).orElse(false), "the command ended");
        assertTrue(p.err().contains("zkcoord: lock /cli/expiry lost: the ZooKeeper session of the lock ended; "
                + "sending SIGTERM to sh (pid "), "the message the documentation shows: " + p.err());
        assertFalse(p.err().contains("SIGKILL"), p.err());
    }

    /** As above, with a command that ignores SIGTERM: it gets SIGKILL after the grace. */
    @Test
    void sessionExpiredOnServerSendsSigkillAfterTheGrace() throws Exception {
        ZkcoordProcess p = start("run", connect(), "--session-timeout", "2s", "--grace", "1s", "--lock", "/cli/stubborn",
                "--", "sh", "-c", "trap 'echo TERM >> log' TERM; echo $$ > pid; while true; do sleep 0.05; done");
        long commandPid = expireWhileFrozen(p, "/cli/stubborn");
        assertEquals(76, p.exitStatus(), p.toString());
        assertEquals("TERM\n", Files.readString(dir.resolve("log")), "it got SIGTERM and went on");
        assertFalse(ProcessHandle.of(commandPid).map(ProcessHandle::isAlive).orElse(false), "the command was killed");
        assertTrue(p.err().contains("still running 1.0s after SIGTERM; sending SIGKILL"), p.err());
    }

    /**
     * Waits until the command runs, freezes zkcoord until the server has expired its session (the
     * lock node is gone), and resumes it.
     *
     * @return the command's pid
     */
    private long expireWhileFrozen(ZkcoordProcess p, String path) throws Exception {
        long commandPid = awaitNumber("pid");
        QueueSnapshot held = queue(path);
        assertEquals(1, held.holders().size(), held.toString());
        assertEquals(p.pid(), held.holders().get(0).ownerPid());
        signal("-STOP", p.pid());
        try {
            await("the server expires the frozen holder's session", () -> queue(path).entries().isEmpty());
        } finally {
            signal("-CONT", p.pid());
        }
        assertTrue(ProcessHandle.of(commandPid).map(ProcessHandle::isAlive).orElse(false),
                "the command ran on while zkcoord was frozen");
        return commandPid;
    }

    /** Bad arguments: one line of error, then the usage, on stderr; exit 2. {@code --help} and {@code --version}: exit 0. */
    @Test
    void badArgumentsExit2() {
        String[][] bad = {
            {"frobnicate"},
            {"run", connect(), "--lock", "/x"},
            {"run", connect(), "--lock", "/x", "--read", "/y", "--", "true"},
            {"run", connect(), "--semaphore", "/s", "--", "true"},
            {"run", connect(), "--lock", "/x", "--wait", "soon", "--", "true"},
            {"inspect", "/x"},
        };
        for (String[] args : bad) {
            ZkcoordProcess p = ZkcoordProcess.run(dir, args);
            assertEquals(2, p.exitStatus(), String.join(" ", args) + ": " + p);
            List<String> lines = p.err().lines().toList();
            assertTrue(lines.size() >= 2 && lines.get(0).startsWith("zkcoord: ") && lines.get(1).startsWith("Usage: zkcoord"),
                    String.join(" ", args) + ": " + p.err());
            assertEquals("", p.out());
        }
        ZkcoordProcess help = ZkcoordProcess.run(dir, "--help");
        assertEquals(0, help.exitStatus());
        assertTrue(help.out().startsWith("Usage: zkcoord"), help.out());
        assertTrue(help.out().contains("76"), help.out());
        ZkcoordProcess version = ZkcoordProcess.run(dir, "--version");
        assertEquals(0, version.exitStatus());
        assertTrue(version.out().startsWith("zkcoord 0.1.0"), version.out());
    }

    /**
     * The jar carries no netty-tcnative (OpenSSL builds for five platforms; the JDK's TLS needs
     * none), yet ZooKeeper's Netty client socket, which TLS connections use, still connects.
     */
    @Test
    void nettyClientSocketWorksWithoutTcnative() throws Exception {
        try (JarFile jar = new JarFile(ZkcoordProcess.JAR.toFile())) {
            List<String> tcnative = jar.stream().map(JarEntry::getName).filter(n -> n.contains("tcnative")).toList();
            assertEquals(List.of(), tcnative);
        }
        ZkcoordProcess p = ZkcoordProcess.run(dir,
                Map.of("JAVA_TOOL_OPTIONS", "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty"),
                "run", connect(), "--lock", "/cli/netty", "--", "sh", "-c", "echo $ZKCOORD_FENCING_TOKEN");
        assertEquals(0, p.exitStatus(), p.toString());
        assertTrue(p.out().trim().matches("[1-9][0-9]*"), p.out());
    }

    // ------------------------------------------------------------------ helpers

    private QueueSnapshot queue(String path) {
        try {
            return Inspector.inspect(observer, path);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void assertRow(String row, String... cells) {
        List<String> columns = List.of(row.trim().split("\\s+"));
        for (String cell : cells) {
            assertTrue(columns.contains(cell), "row has " + cell + ": " + row);
        }
        assertEquals(cells[0], columns.get(0), row);
    }
}
