package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The command line itself: help, unknown options, the connect string from the environment, and
 * what a user reads when ZooKeeper cannot be reached (a few lines, never a stack trace).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CliArgumentsTest extends CliFixture {

    /** {@code zkcoord help run} is help: the run usage on stdout, exit 0. */
    @Test
    void helpSubcommandExits0() {
        ZkcoordProcess p = ZkcoordProcess.run(dir, "help", "run");
        assertEquals(0, p.exitStatus(), p.toString());
        assertTrue(p.out().startsWith("Usage: zkcoord run"), p.out());
        ZkcoordProcess root = ZkcoordProcess.run(dir, "help");
        assertEquals(0, root.exitStatus(), root.toString());
        assertTrue(root.out().startsWith("Usage: zkcoord"), root.out());
    }

    /** {@code inspect --help} lists inspect's exit statuses only; {@code run --help} lists run's. */
    @Test
    void eachHelpListsItsOwnExitStatuses() {
        ZkcoordProcess inspect = ZkcoordProcess.run(dir, "inspect", "--help");
        assertEquals(0, inspect.exitStatus(), inspect.toString());
        String statuses = inspect.out().substring(inspect.out().indexOf("Exit status:"));
        assertEquals(List.of("0", "2", "69", "77"), statuses.lines().skip(1).map(l -> l.strip().split("\\s+")[0]).toList(),
                statuses);
        ZkcoordProcess run = ZkcoordProcess.run(dir, "run", "--help");
        assertEquals(0, run.exitStatus(), run.toString());
        assertTrue(run.out().contains("75") && run.out().contains("76") && run.out().contains("127"), run.out());
    }

    /**
     * A mistyped path or connect string: one line naming what was typed and what to type, exit 2,
     * before anything connects (never the library's "shard path" or "IPv6 address" for it).
     */
    @Test
    void mistypedPathOrSeparatorNamesWhatToType() {
        String[][] cases = {
            {"zkcoord: PATH 'locks/nightly-export' must start with '/': write /locks/nightly-export",
                "inspect", connect(), "locks/nightly-export"},
            {"zkcoord: PATH '/' is the root, not a lock's path: name one under it, e.g. /locks/nightly-export",
                "inspect", connect(), "/"},
            {"zkcoord: --lock 'locks/x' must start with '/': write /locks/x",
                "run", connect(), "--lock", "locks/x", "--", "true"},
            {"zkcoord: --connect '127.0.0.1:2181;127.0.0.1:2182' is not valid: it has ';' between servers; use ','"
                + " between servers, not ';': '127.0.0.1:2181,127.0.0.1:2182'",
                "inspect", "--connect", "127.0.0.1:2181;127.0.0.1:2182", "/locks/nightly-export"},
        };
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOfRange(c, 1, c.length);
            ZkcoordProcess p = ZkcoordProcess.run(dir, args);
            assertEquals(2, p.exitStatus(), p.toString());
            assertEquals(List.of(c[0]), p.err().lines().toList(), String.join(" ", args) + ": " + p.err());
        }
    }

    /**
     * The top-level help lists every status once, and 77 for both subcommands (inspect is refused
     * for want of READ too), not under {@code run:} only.
     */
    @Test
    void topLevelHelpSaysBothSubcommandsCanExit77() {
        ZkcoordProcess p = ZkcoordProcess.run(dir, "--help");
        assertEquals(0, p.exitStatus(), p.toString());
        String statuses = p.out().substring(p.out().indexOf("Exit status:")).replaceAll("\\s+", " ");
        assertTrue(statuses.contains(" 77 not authorized (inspect: the path's ACL withholds READ; run: the lock's ACL"
                + " refuses us, the command was not started)"), statuses);
        assertFalse(statuses.contains(" 77 run:"), statuses);
        assertEquals(1, statuses.split(" 77 ", -1).length - 1, statuses);
    }

    /** A mistyped option is reported as unknown, with the option it resembles; exit 2. */
    @Test
    void mistypedOptionIsUnknown() {
        for (String[] args : new String[][] {
            {"run", "--conect", server.getConnectString(), "--lock", "/x", "--", "true"},
            {"inspect", "--conect=" + server.getConnectString(), "/x"},
        }) {
            ZkcoordProcess p = ZkcoordProcess.run(dir, args);
            assertEquals(2, p.exitStatus(), p.toString());
            String first = p.err().lines().findFirst().orElse("");
            assertTrue(first.startsWith("zkcoord: Unknown option") && first.contains("'--conect")
                    && first.contains("did you mean --connect"), String.join(" ", args) + ": " + p.err());
        }
    }

    /** {@code ZKCOORD_CONNECT} gives the ensemble when {@code --connect} is absent; the option wins over it. */
    @Test
    void connectStringFromTheEnvironment() {
        Map<String, String> env = Map.of("ZKCOORD_CONNECT", server.getConnectString());
        ZkcoordProcess inspect = ZkcoordProcess.run(dir, env, "inspect", "/cli/env");
        assertEquals(0, inspect.exitStatus(), inspect.toString());
        ZkcoordProcess run = ZkcoordProcess.run(dir, env, "run", "--lock", "/cli/env", "--", "true");
        assertEquals(0, run.exitStatus(), run.toString());

        ZkcoordProcess wrongEnvironment = ZkcoordProcess.run(dir, Map.of("ZKCOORD_CONNECT", "127.0.0.1:1"),
                "inspect", connect(), "/cli/env");
        assertEquals(0, wrongEnvironment.exitStatus(), "--connect wins: " + wrongEnvironment);

        ZkcoordProcess neither = ZkcoordProcess.run(dir, "inspect", "/cli/env");
        assertEquals(2, neither.exitStatus(), neither.toString());
        assertTrue(neither.err().startsWith("zkcoord: Missing required option: '--connect=HOST:PORT[,...]' "
                + "(or the environment variable ZKCOORD_CONNECT)"), neither.err());
    }

    /**
     * A host that does not resolve: exit 69 with a few lines that say so as the library reports it,
     * none of them ZooKeeper's own log lines or a stack trace.
     */
    @Test
    void unresolvableHostIsAFewLines() {
        // The reason is found by probing halfway through the connection timeout: 10 s leaves a busy
        // machine 5 s to look the names up. Both run at once, so the test takes one timeout.
        List<String[]> runs = List.of(
                new String[] {"inspect", "--connect=zk1.invalid:2181,zk2.invalid:2181", "--connect-timeout=10s", "/x"},
                new String[] {"run", "--connect=zk1.invalid:2181", "--connect-timeout=10s", "--lock", "/x", "--", "true"});
        List<ZkcoordProcess> started = runs.stream().map(args -> start(args)).toList();
        for (int i = 0; i < runs.size(); i++) {
            ZkcoordProcess p = started.get(i);
            p.exitStatus(Duration.ofSeconds(60));
            assertFewLines(p, String.join(" ", runs.get(i)));
            assertTrue(p.err().contains("does not resolve"), "names the problem: " + p.err());
        }
    }

    /** A connect string with a bad syntax is bad arguments: exit 2, one line naming the mistake, nothing tried. */
    @Test
    void badConnectStringSyntaxExits2() {
        ZkcoordProcess p = ZkcoordProcess.run(dir, "inspect", "--connect=nohost:abc", "/x");
        assertEquals(2, p.exitStatus(), p.toString());
        assertEquals(1, p.err().lines().count(), p.err());
        assertTrue(p.err().contains("the port 'abc' of 'nohost:abc' is not a number"), p.err());
    }

    /** Connection refused (a port nobody listens on): exit 69, a few lines, no stack trace. */
    @Test
    void refusedConnectionIsAFewLines() throws IOException {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        ZkcoordProcess p = ZkcoordProcess.run(dir, "inspect", "--connect=127.0.0.1:" + closed, "--connect-timeout=3s",
                "/x");
        assertFewLines(p, "refused");
        assertTrue(p.err().contains("connection refused"), "names the problem: " + p.err());
    }

    private static void assertFewLines(ZkcoordProcess p, String what) {
        assertEquals(69, p.exitStatus(), what + ": " + p);
        List<String> lines = p.err().lines().toList();
        assertTrue(lines.size() >= 1 && lines.size() <= 3, what + ": " + lines.size() + " lines: " + p.err());
        assertTrue(lines.stream().allMatch(l -> l.startsWith("zkcoord: ")), what + ": only zkcoord's own lines: " + p.err());
        assertFalse(p.err().contains("\tat "), what + ": no stack trace: " + p.err());
        assertEquals("", p.out());
    }
}
