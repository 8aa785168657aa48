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
                String evidence = evidenceOfAHang();
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError("zkcoord still running after " + max.toMillis() + " ms; stderr: " + err()
                        + "\n" + evidence);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return process.exitValue();
    }

    /**
     * What a failure report needs when zkcoord does not exit: its signal dispositions (a signal
     * ignored since it started is never delivered) and a thread dump (SIGQUIT makes the JVM print
     * one to its standard output, which goes to a file here).
     */
    private String evidenceOfAHang() throws InterruptedException {
        StringBuilder b = new StringBuilder();
        try {
            Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status")).stream()
                    .filter(line -> line.startsWith("Sig")).forEach(line -> b.append(line).append('\n'));
        } catch (IOException | UncheckedIOException e) {
            b.append("no /proc status: ").append(e).append('\n');
        }
        int before = out().length();
        try {
            new ProcessBuilder("kill", "-QUIT", Long.toString(process.pid())).start().waitFor();
        } catch (IOException e) {
            b.append("kill -QUIT failed: ").append(e).append('\n');
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!out().substring(before).contains("JNI global refs") && System.nanoTime() - deadline < 0) {
            Thread.sleep(50); // polling for the thread dump, with a deadline
        }
        return b.append("thread dump:\n").append(out().substring(before)).toString();
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
