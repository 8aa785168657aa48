package io.zkcoord.queue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The data written into a lock node when it is created, and never changed after (a {@code
 * setData} would fire the successor's watch): who holds or waits, for operators reading the
 * directory with {@code zkCli}.
 */
public final class OwnerInfo {

    private static final String HOST = hostName();
    private static final long PID = ProcessHandle.current().pid();

    private OwnerInfo() {
    }

    /** @return e.g. {@code host=app-3 pid=4242 thread=worker-7 requested=2026-11-22T00:10:00Z} */
    public static byte[] ofCurrentThread() {
        String text = "host=" + HOST + " pid=" + PID + " thread=" + Thread.currentThread().getName()
                + " requested=" + Instant.now();
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown";
        }
    }
}
