package io.zkcoord.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds and runs the README's Spring Boot application ({@code examples/readme-app}, whose pom
 * has only the README's two dependency blocks) against a one-server ZooKeeper ensemble of its own:
 * {@code mvn spring-boot:run} in that folder, as its user would. Exits with the application's
 * status: 0 only if it compiled, started, and ran its {@code @SchedulerLock} job under zkcoord's
 * lock. Needs the library and its Spring, ShedLock and Micrometer modules installed, and {@code mvn}
 * on the path.
 *
 * <p>{@code mvn -B -q -f examples/pom.xml compile exec:exec -Ddemo=ReadmeApp}
 */
public final class ReadmeApp {

    private static final long LIMIT_MINUTES = 10;

    private ReadmeApp() {
    }

    /**
     * @param args none
     * @throws Exception if the ensemble or Maven cannot be started
     */
    public static void main(String[] args) throws Exception {
        ExitWithParent.exitWithParentProcess();
        Path app = findApp();
        int status;
        try (LocalEnsemble ensemble = LocalEnsemble.start(1, line -> { })) {
            List<String> command = List.of(mavenCommand(), "-B", "-q", "-f", app.resolve("pom.xml").toString(),
                    "compile", "spring-boot:run",
                    "-Dspring-boot.run.arguments=--zkcoord.connect-string=" + ensemble.connectString());
            System.out.println("readme-app: " + String.join(" ", command));
            Process maven = new ProcessBuilder(command).directory(app.toFile()).inheritIO().start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> maven.descendants().forEach(ProcessHandle::destroy)));
            if (!maven.waitFor(LIMIT_MINUTES, TimeUnit.MINUTES)) {
                maven.descendants().forEach(ProcessHandle::destroyForcibly);
                maven.destroyForcibly();
                System.err.println("readme-app: did not end within " + LIMIT_MINUTES + " minutes");
                status = 1;
            } else {
                status = maven.exitValue();
            }
        }
        System.out.println("readme-app: " + (status == 0 ? "built from the README's blocks, started, ran its @SchedulerLock job"
                : "FAILED with status " + status));
        System.exit(status);
    }

    private static Path findApp() throws IOException {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path app = p.resolve("examples/readme-app");
            if (Files.isRegularFile(app.resolve("pom.xml"))) {
                return app;
            }
        }
        throw new IOException("no examples/readme-app at or above " + Path.of("").toAbsolutePath());
    }

    private static String mavenCommand() {
        return System.getProperty("os.name").startsWith("Windows") ? "mvn.cmd" : "mvn";
    }
}
