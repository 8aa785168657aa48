package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The built {@code zkcoord.jar} running as a child process, as a user runs it: {@code java -jar
 * zkcoord.jar ARGS}, its output and error captured in files of the test's folder.
 */
final class ZkcoordProcess {

    static final Path JAR = Path.of(System.getProperty("zkcoord.jar", "target/zkcoord.jar"));

    private final Process process;
    private final Path out;
    private final Path err;

    private ZkcoordProcess(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** Starts {@code zkcoord ARGS} in {@code dir} (its working directory and where its output goes). */
    static ZkcoordProcess start(Path dir, String... args) {
        return start(dir, Map.of(), args);
    }

    /** As {@link #start(Path, String...)}, with {@code environment} added to the inherited one. */
    static ZkcoordProcess start(Path dir, Map<String, String> environment, String... args) {
        assertTrue(Files.isRegularFile(JAR), "the runnable jar is built first (mvn verify): " + JAR.toAbsolutePath());
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-jar");
        command.add(JAR.toAbsolutePath().toString());
        command.addAll(List.of(args));
        try {
            Path out = Files.createTempFile(dir, "zkcoord", ".out");
            Path err = Files.createTempFile(dir, "zkcoord", ".err");
            ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().remove("ZKCOORD_CONNECT");
            pb.environment().putAll(environment);
            Process p = pb.start();
            return new ZkcoordProcess(p, out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code zkcoord ARGS} to its end (at most a minute) and returns it. */
    static ZkcoordProcess run(Path dir, String... args) {
        return run(dir, Map.of(), args);
    }

    /** As {@link #run(Path, String...)}, with {@code environment} added to the inherited one. */
    static ZkcoordProcess run(Path dir, Map<String, String> environment, String... args) {
        ZkcoordProcess p = start(dir, environment, args);
        p.exitStatus(Duration.ofSeconds(60));
        return p;
    }

    Process process() {
        return process;
    }

    long pid() {
        return process.pid();
    }

    /**
     * @return its exit status, waiting at most {@code max}
     * @throws AssertionError if it is still running then (it is killed)
     */
    int exitStatus(Duration max) {
        try {
            if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError("zkcoord still running after " + max.toMillis() + " ms; stderr: " + err());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return process.exitValue();
    }

    int exitStatus() {
        return exitStatus(Duration.ofSeconds(60));
    }

    String out() {
        return read(out);
    }

    String err() {
        return read(err);
    }

    /** Kills it and every process it started, if still running (test clean-up). */
    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.onExit().join();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "zkcoord pid " + process.pid() + " (stderr: " + err() + ")";
    }
}
