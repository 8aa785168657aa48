package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zkcoord.ZkClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the CLI tests share: a real ZooKeeper server in this JVM (tick 500 ms: sessions of 1 s to
 * 60 s, so a test can let one expire quickly, or ask for one far longer than its waits), an observing client, the built jar started as a
 * child process in the test's folder (killed after each test if still running), and bounded waits.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CliFixture {

    static final Duration WAIT = Duration.ofSeconds(30);

    TestingServer server;
    ZkClient observer;
    private final List<ZkcoordProcess> started = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    void startServer() throws Exception {
        // maxSessionTimeout: a test may ask for a session much longer than any wait it makes.
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, 0,
                Map.of("maxSessionTimeout", "60000")), true);
        observer = ZkClient.builder().connectString(server.getConnectString()).build();
    }

    @AfterEach
    void killLeftovers() {
        started.forEach(ZkcoordProcess::kill);
        started.clear();
    }

    @AfterAll
    void stopServer() throws Exception {
        observer.close();
        server.close();
    }

    /** Starts {@code java -jar zkcoord.jar args...} in the test's folder. */
    ZkcoordProcess start(String... args) {
        ZkcoordProcess p = ZkcoordProcess.start(dir, args);
        started.add(p);
        return p;
    }

    String connect() {
        return "--connect=" + server.getConnectString();
    }

    void awaitFile(String name) {
        await(name + " written", () -> Files.exists(dir.resolve(name)));
    }

    /**
     * Waits until a command has written a whole line to {@code name} (a shell's {@code echo x > f}
     * creates the file before it writes, so the file can exist and still be empty) and parses it.
     */
    long awaitNumber(String name) {
        Path file = dir.resolve(name);
        await(name + " written", () -> {
            try {
                return Files.exists(file) && Files.readString(file).endsWith("\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Polls {@code condition} until it holds, failing after {@link #WAIT}. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + WAIT.toSeconds() + " s: " + what);
            }
            try {
                Thread.sleep(20); // polling a condition with a deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill " + signal + " " + pid);
    }
}
