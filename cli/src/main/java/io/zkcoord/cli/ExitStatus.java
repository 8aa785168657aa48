package io.zkcoord.cli;

/**
 * The exit statuses of {@code zkcoord} itself. {@code run} otherwise exits with its command's
 * status. The values come from {@code sysexits.h} (64-78), which ordinary commands rarely use, so a
 * script can tell zkcoord's own outcomes from the command's.
 */
final class ExitStatus {

    /** Done; for {@code run}, also the command's own 0. */
    static final int OK = 0;
    /** Bad arguments: a one-line error and the usage on stderr. */
    static final int USAGE = 2;
    /** ZooKeeper could not be reached (or refused) in time: nothing was run. */
    static final int UNAVAILABLE = 69;
    /** {@code run}: the lock was not acquired within {@code --wait}; the command never started. */
    static final int NOT_ACQUIRED = 75;
    /**
     * {@code run}: the lock was lost while the command ran (the session expired, or the connection
     * was suspended for longer than {@code --grace}); the command was sent SIGTERM, and SIGKILL
     * after the grace if still running.
     */
    static final int LOCK_LOST = 76;
    /** {@code run}: the command was found but could not be started (as a shell reports it). */
    static final int CANNOT_EXECUTE = 126;
    /** {@code run}: the command was not found (as a shell reports it). */
    static final int NOT_FOUND = 127;

    /** The table printed by {@code --help}. */
    static final String[] HELP = {
        "  0    done (run: the command exited 0)",
        "  2    bad arguments",
        "  69   ZooKeeper not reachable within --connect-timeout, or it refused",
        "  75   run: not acquired within --wait; the command was not started",
        "  76   run: the lock was lost while the command ran; it was sent SIGTERM (SIGKILL after --grace)",
        "  126  run: the command could not be executed",
        "  127  run: the command was not found",
        "  else run: the command's own exit status (128+N if a signal N ended it)",
    };

    private ExitStatus() {
    }
}
