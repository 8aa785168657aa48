package io.zkcoord.examples;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Ends a child process when the process that started it ends, however it ends (normal exit,
 * Ctrl-C, {@code kill}, {@code kill -9}), so a demo never leaves a ZooKeeper server or a buyer
 * behind.
 *
 * <p>How: the parent starts every child with a pipe on its stdin ({@link ProcessBuilder}'s default)
 * and never writes to it. When the parent dies the kernel closes the pipe's write end and the
 * child's read of stdin returns end-of-file; the child then exits. Java hands no other process
 * that write end (it closes every other descriptor in a child), so nothing else keeps it open.
 *
 * <p>As a main program it wraps another main class:
 * {@code java -cp ... io.zkcoord.examples.ExitWithParent org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg}.
 */
public final class ExitWithParent {

    /** Exit status of a child whose parent went away. */
    static final int ORPHANED = 3;

    private ExitWithParent() {
    }

    /** Starts a daemon thread that exits this JVM once stdin reaches end-of-file. */
    public static void watchParent() {
        Thread watcher = new Thread(() -> {
            InputStream in = System.in;
            try {
                while (in.read() != -1) {
                    // the parent never writes; anything read is ignored
                }
            } catch (IOException e) {
                // a broken stdin means the parent is gone as well
            }
            System.exit(ORPHANED);
        }, "exit-with-parent");
        watcher.setDaemon(true);
        watcher.start();
    }

    /**
     * Starts watching the process that started this JVM, and exits this JVM (running its shutdown
     * hooks, which stop the servers it started) once that process ends, however it ends.
     *
     * <p>For the demo programs, which {@code mvn exec:exec} starts: {@code kill} of the {@code mvn}
     * process does not stop its child, and the child's stdin is no pipe of Maven's that would reach
     * end-of-file, so {@link #watchParent()} alone cannot tell. The parent's exit is read from the
     * operating system ({@link ProcessHandle#onExit()}).
     */
    public static void exitWithParentProcess() {
        ProcessHandle.current().parent().ifPresent(parent -> parent.onExit().thenRun(() -> System.exit(ORPHANED)));
    }

    /**
     * @param args the main class to run, then its arguments
     * @throws Exception whatever that main throws
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: ExitWithParent <main class> [arguments...]");
            System.exit(2);
        }
        watchParent();
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }
}
