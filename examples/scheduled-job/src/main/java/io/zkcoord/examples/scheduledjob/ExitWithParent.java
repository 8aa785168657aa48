package io.zkcoord.examples.scheduledjob;

import java.io.IOException;
import java.io.InputStream;

/**
 * Ends a child process when the demo that started it ends, however it ends (normal exit, Ctrl-C,
 * {@code kill -9}): the demo starts each child with a pipe on its stdin and never writes to it;
 * when the demo dies the pipe closes, the child's read returns end-of-file, and it exits.
 */
final class ExitWithParent {

    /** Exit status of a child whose parent went away. */
    static final int ORPHANED = 3;

    private ExitWithParent() {
    }

    /** Starts a daemon thread that exits this JVM once stdin reaches end-of-file. */
    static void watchParent() {
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
}
