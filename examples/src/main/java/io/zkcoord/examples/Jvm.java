package io.zkcoord.examples;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Command lines for child JVMs that run a main class of this class path. */
final class Jvm {

    /**
     * Options for short-lived demo processes on a small machine: a small heap, the serial
     * collector and the C1 compiler only, which start several JVMs at once noticeably faster.
     */
    static final List<String> LIGHT = List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    private Jvm() {
    }

    /**
     * @param options JVM options
     * @param mainClass the class to run; it gets {@link ExitWithParent} in front of it, so the
     *     child ends with this process
     * @param args the program's arguments
     * @return {@code java <options> -cp <this JVM's class path> ExitWithParent <mainClass> <args>}
     */
    static List<String> command(List<String> options, String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ExitWithParent.class.getName());
        command.add(mainClass);
        command.addAll(args);
        return command;
    }
}
