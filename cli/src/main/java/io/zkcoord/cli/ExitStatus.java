package io.zkcoord.cli;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The exit statuses of {@code zkcoord} itself. {@code run} otherwise exits with its command's
 * status. The values come from {@code sysexits.h} (64-78), which ordinary commands rarely use, so a
 * script can tell zkcoord's own outcomes from the command's.
 */
final class ExitStatus {

    /** Done; for {@code run}, also the command's own 0. */
    static final int OK = 0;
    /** Bad arguments: a one-line error (and the usage, for a command line picocli cannot parse) on stderr. */
    static final int USAGE = 2;
    /** ZooKeeper could not be reached (or refused) in time: nothing was run. */
    static final int UNAVAILABLE = 69;
    /**
     * ZooKeeper refused for want of permission (an ACL that does not grant this client's
     * identities what the step needs): {@code inspect} of a directory withholding READ, {@code run}
     * of a lock whose directory withholds CREATE. Nothing was run.
     */
    static final int NOT_AUTHORIZED = 77;
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

    private ExitStatus() {
    }

    /** @return the statuses {@code zkcoord inspect} can exit with, for its {@code --help} */
    static Map<String, String> forInspect() {
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put("0", "done");
        codes.put("2", "bad arguments");
        codes.put("69", "ZooKeeper not reachable within --connect-timeout, or it refused");
        codes.put("77", "not authorized: the path's ACL withholds READ from us");
        return codes;
    }

    /** @return the statuses {@code zkcoord run} can exit with, for its {@code --help} */
    static Map<String, String> forRun() {
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put("0", "the command exited 0");
        codes.put("2", "bad arguments");
        codes.put("69", "ZooKeeper not reachable within --connect-timeout, or it refused");
        codes.put("75", "not acquired within --wait; the command was not started");
        codes.put("77", "not authorized: the lock's ACL refuses us; the command was not started");
        codes.put("76", "the lock was lost while the command ran; it was sent SIGTERM (SIGKILL after --grace)");
        codes.put("126", "the command could not be executed");
        codes.put("127", "the command was not found");
        codes.put("else", "the command's own exit status (128+N if a signal N ended it)");
        return codes;
    }

    /** @return every status, for {@code zkcoord --help} */
    static Map<String, String> forAll() {
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put("0", "done (run: the command exited 0)");
        codes.put("2", "bad arguments");
        codes.put("69", "ZooKeeper not reachable within --connect-timeout, or it refused");
        // Both subcommands can be refused for want of permission: not a run-only status.
        codes.put("77", "not authorized (inspect: the path's ACL withholds READ; run: the lock's ACL refuses us,"
                + " the command was not started)");
        forRun().forEach((code, meaning) -> codes.putIfAbsent(code, "run: " + meaning));
        return codes;
    }
}
