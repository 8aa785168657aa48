package io.zkcoord.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether a command name can be run, checked before the lock's command is started: the command
 * starts through a shell guard ({@link Watchdog}), whose own "not found" would come too late to
 * tell apart from the command's status 127.
 */
final class Executables {

    /** The problem reported for a command that is not found. */
    static final String NOT_FOUND = "not found";

    private Executables() {
    }

    /**
     * @param name a command name as given: a path if it contains {@code /}, else looked up in
     *     {@code PATH} as {@code execvp} does
     * @return empty if it can be run, else the problem: {@link #NOT_FOUND}, or why it cannot be run
     */
    static Optional<String> problem(String name) {
        if (name.isEmpty()) {
            return Optional.of(NOT_FOUND);
        }
        if (name.contains("/")) {
            return problem(Path.of(name));
        }
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        Optional<String> found = Optional.of(NOT_FOUND);
        for (String folder : path.split(File.pathSeparator, -1)) {
            Path candidate = Path.of(folder.isEmpty() ? "." : folder, name);
            if (Files.exists(candidate)) {
                found = problem(candidate);
                if (found.isEmpty()) {
                    return found;
                }
            }
        }
        return found;
    }

    private static Optional<String> problem(Path file) {
        if (!Files.exists(file)) {
            return Optional.of(NOT_FOUND);
        }
        if (Files.isDirectory(file)) {
            return Optional.of("is a directory");
        }
        if (!Files.isExecutable(file)) {
            return Optional.of("permission denied");
        }
        return Optional.empty();
    }
}
