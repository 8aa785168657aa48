package io.zkcoord.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Flight Recorder recording of a contended run holds one wait and one hold event per lock cycle. */
class FlightRecorderEventsTest {

    private static final String PATH = "/observe/jfr";
    private static final int CYCLES = 10;

    /**
     * Two threads, each with a client of its own, take one {@code ZkMutex} {@value #CYCLES} times
     * each: the recording has a {@code io.zkcoord.LockWait} (granted, with the hold's token) and a
     * {@code io.zkcoord.LockHold} for every cycle, all on the lock's path, and the two threads'
     * holds never overlap.
     */
    @Test
    void contendedMutexRecordsWaitsAndHolds(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("locks.jfr");
        Set<Long> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (TestingServer server = new TestingServer(true);
                ZkClient a = ZkClient.builder().connectString(server.getConnectString()).build();
                ZkClient b = ZkClient.builder().connectString(server.getConnectString()).build();
                Recording recording = new Recording()) {
            recording.enable("io.zkcoord.LockWait");
            recording.enable("io.zkcoord.LockHold");
            recording.start();
            ExecutorService threads = Executors.newFixedThreadPool(2);
            CyclicBarrier go = new CyclicBarrier(2);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (ZkClient client : List.of(a, b)) {
                ZkMutex mutex = new ZkMutex(client, PATH);
                done.add(threads.submit(() -> {
                    go.await();
                    for (int i = 0; i < CYCLES; i++) {
                        mutex.lock();
                        try {
                            tokens.add(mutex.fencingToken());
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                        } finally {
                            mutex.unlock();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            threads.shutdown();
            recording.stop();
            recording.dump(file);
            assertEquals(0, overlaps.get());
        }
        assertTrue(Files.size(file) > 0);

        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> waits = named(events, "io.zkcoord.LockWait");
        List<RecordedEvent> holds = named(events, "io.zkcoord.LockHold");
        assertEquals(2 * CYCLES, waits.size(), "one wait per cycle");
        assertEquals(2 * CYCLES, holds.size(), "one hold per cycle");
        for (RecordedEvent e : waits) {
            assertEquals(PATH, e.getString("path"));
            assertEquals("mutex", e.getString("recipe"));
            assertEquals("THREAD", e.getString("holder"));
            assertEquals("granted", e.getString("outcome"));
            assertTrue(!e.getDuration().isNegative());
        }
        for (RecordedEvent e : holds) {
            assertEquals(PATH, e.getString("path"));
            assertEquals(false, e.getBoolean("lost"));
        }
        Set<Long> granted = waits.stream().map(e -> e.getLong("fencingToken")).collect(Collectors.toCollection(TreeSet::new));
        Set<Long> held = holds.stream().map(e -> e.getLong("token")).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(tokens), granted, "every wait names the token its hold got");
        assertEquals(new TreeSet<>(tokens), held, "every hold names its token");
        // Holds of one exclusive lock never overlap in the recording's own time either.
        List<RecordedEvent> byStart = new ArrayList<>(holds);
        byStart.sort((x, y) -> x.getStartTime().compareTo(y.getStartTime()));
        for (int i = 1; i < byStart.size(); i++) {
            assertTrue(!byStart.get(i).getStartTime().isBefore(byStart.get(i - 1).getEndTime()),
                    "hold " + i + " starts before the previous one ends");
        }
        assertTrue(waits.stream().anyMatch(e -> e.getDuration().compareTo(Duration.ZERO) > 0));
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }
}
