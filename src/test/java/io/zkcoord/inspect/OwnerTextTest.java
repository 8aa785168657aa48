package io.zkcoord.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Node data parsed into owner fields, leniently: what the recipes write, and what they do not. */
class OwnerTextTest {

    private static OwnerText parse(String text) {
        return OwnerText.parse(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The recipes' own format. */
    @Test
    void ownerInfo() {
        assertEquals(new OwnerText("app-3", 4242, "worker-7"),
                parse("host=app-3 pid=4242 thread=worker-7 requested=2026-11-22T00:10:00Z"));
    }

    /** A thread name with spaces, even one containing " requested=", is kept whole. */
    @Test
    void threadNameWithSpaces() {
        assertEquals(new OwnerText("h", 1, "pool 1 thread 2"),
                parse("host=h pid=1 thread=pool 1 thread 2 requested=2026-11-22T00:10:00Z"));
        assertEquals(new OwnerText("h", 1, "odd requested=x y"),
                parse("host=h pid=1 thread=odd requested=x y requested=2026-11-22T00:10:00.123Z"));
    }

    /** A multi-lock's node lists its paths after the owner. */
    @Test
    void multiLockPaths() {
        assertEquals(new OwnerText("h", 9, "main"),
                parse("host=h pid=9 thread=main requested=2026-11-22T00:10:00Z paths=/a,/b"));
    }

    /** Data no recipe wrote gives empty fields, never an exception. */
    @Test
    void foreignData() {
        assertEquals(OwnerText.UNKNOWN, parse(""));
        assertEquals(OwnerText.UNKNOWN, parse("hello"));
        assertEquals(OwnerText.UNKNOWN, parse("host=h pid=notanumber thread=t requested=x"));
        assertEquals(OwnerText.UNKNOWN, parse("host=h pid=1"));
        assertEquals(OwnerText.UNKNOWN, OwnerText.parse(null));
        assertEquals(OwnerText.UNKNOWN, OwnerText.parse(new byte[] {(byte) 0xff, 0, 1}));
    }

    /** The semaphore's permit count from the directory's data; 1 when it says nothing usable. */
    @Test
    void permits() {
        assertEquals(3, Inspector.permits("permits=3".getBytes(StandardCharsets.UTF_8)));
        assertEquals(1, Inspector.permits(null));
        assertEquals(1, Inspector.permits("permits=x".getBytes(StandardCharsets.UTF_8)));
        assertEquals(1, Inspector.permits("".getBytes(StandardCharsets.UTF_8)));
    }
}
