package io.zkcoord.shedlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The provider never reads this machine's wall clock: none of its classes refers to a method or
 * type that does (read from their compiled constant pools). With {@code
 * ZkcoordLockProviderTest.aSkewedClientClockDecidesNothingDifferently}, which skews ShedLock's own
 * clock, this stands for a child JVM under {@code faketime}, which a fresh CI machine lacks.
 */
class NoClientClockTest {

    private static final List<String> CLOCK_READERS = List.of(
            "currentTimeMillis",          // System.currentTimeMillis
            "java/time/Instant",          // Instant.now and its relatives
            "java/time/Clock",
            "java/time/LocalDateTime",
            "java/time/ZonedDateTime",
            "java/util/Date",
            "ClockProvider",              // ShedLock's clock
            "getLockAtMostUntil",         // createdAt + lockAtMostFor: the client's clock
            "getLockAtLeastUntil",
            "getUnlockTime");

    /** Not one reference to a wall clock in the provider's classes. */
    @Test
    void theProviderNeverReadsTheClientsClock() throws IOException {
        List<String> found = new ArrayList<>();
        for (Class<?> type : List.of(ZkcoordLockProvider.class, ZkcoordSimpleLock.class, ZkcoordSimpleLock.Grant.class,
                LockRecord.class, LockRecord.State.class)) {
            String constants = constantPool(type);
            for (String reader : CLOCK_READERS) {
                if (constants.contains(reader)) {
                    found.add(type.getSimpleName() + " refers to " + reader);
                }
            }
        }
        for (Class<?> nested : ZkcoordLockProvider.class.getDeclaredClasses()) {
            String constants = constantPool(nested);
            CLOCK_READERS.stream().filter(constants::contains).forEach(r -> found.add(nested.getName() + " refers to " + r));
        }
        assertTrue(found.isEmpty(), "the provider reads a client clock: " + found);
        assertTrue(constantPool(ZkcoordLockProvider.class).contains("getMtime"), "the check reads real class files");
    }

    /** @return the class file's bytes as Latin-1 text: its constant pool's names appear in it verbatim */
    private static String constantPool(Class<?> type) throws IOException {
        String resource = type.getName().replace('.', '/') + ".class";
        try (InputStream in = type.getClassLoader().getResourceAsStream(resource)) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
