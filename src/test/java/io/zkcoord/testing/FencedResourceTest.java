package io.zkcoord.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class FencedResourceTest {

    /** The first write is accepted whatever its token, and sets the highest token. */
    @Test
    void firstWriteIsAccepted() {
        FencedResource r = new FencedResource();
        assertEquals(OptionalLong.empty(), r.highestToken());
        assertTrue(r.write(-5));
        assertEquals(OptionalLong.of(-5), r.highestToken());
        assertEquals(1, r.acceptedWrites());
        assertEquals(0, r.refusedWrites());
    }

    /** Equal tokens are accepted (a holder writes several times), higher ones too, lower ones are refused. */
    @Test
    void refusesOnlyLowerTokens() {
        FencedResource r = new FencedResource();
        assertTrue(r.write(10));
        assertTrue(r.write(10));
        assertTrue(r.write(12));
        assertFalse(r.write(10), "a stale holder's write");
        assertFalse(r.write(11));
        assertTrue(r.write(12));
        assertEquals(OptionalLong.of(12), r.highestToken());
        assertEquals(4, r.acceptedWrites());
        assertEquals(2, r.refusedWrites());
    }

    /** Concurrent writers: every write is counted once, and the highest token is the maximum offered. */
    @Test
    void countsExactlyUnderConcurrency() throws Exception {
        FencedResource r = new FencedResource();
        int threads = 4;
        int perThread = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                results.add(pool.submit(() -> {
                    start.await();
                    long ok = 0;
                    long no = 0;
                    for (int i = 0; i < perThread; i++) {
                        if (r.write((long) i * threads + offset)) {
                            ok++;
                        } else {
                            no++;
                        }
                    }
                    return new long[] {ok, no};
                }));
            }
            start.countDown();
            long ok = 0;
            long no = 0;
            for (Future<long[]> f : results) {
                long[] counts = f.get(30, TimeUnit.SECONDS);
                ok += counts[0];
                no += counts[1];
            }
            assertEquals(ok, r.acceptedWrites());
            assertEquals(no, r.refusedWrites());
            assertEquals((long) threads * perThread, r.acceptedWrites() + r.refusedWrites());
            assertEquals(OptionalLong.of((long) (perThread - 1) * threads + threads - 1), r.highestToken());
        } finally {
            pool.shutdownNow();
        }
    }
}
