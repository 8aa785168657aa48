package io.zkcoord.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.zookeeper.WatchedEvent;

/**
 * The zxid a watch event carries: {@code WatchedEvent.getZxid()}, new in the ZooKeeper 3.9 client.
 * Looked up once by name, so that the library also runs on a 3.8 client jar, whose events carry
 * none: there every event reads as {@link #NO_ZXID}, as an event from a 3.8 server does on a 3.9
 * client. Stateless; thread-safe.
 */
public final class EventZxid {

    /** No zxid known: {@code WatchedEvent.NO_ZXID} of the 3.9 client. */
    public static final long NO_ZXID = -1L;

    private static final MethodHandle GET_ZXID = lookUp();

    private EventZxid() {
    }

    /**
     * @param event a watch event
     * @return its zxid, or {@link #NO_ZXID} if it carries none or the client jar is 3.8
     */
    public static long of(WatchedEvent event) {
        if (GET_ZXID == null) {
            return NO_ZXID;
        }
        try {
            return (long) GET_ZXID.invokeExact(event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("WatchedEvent.getZxid() failed", e);
        }
    }

    private static MethodHandle lookUp() {
        try {
            return MethodHandles.publicLookup().findVirtual(WatchedEvent.class, "getZxid",
                    MethodType.methodType(long.class));
        } catch (NoSuchMethodException | IllegalAccessException zookeeper38) {
            return null;
        }
    }
}
