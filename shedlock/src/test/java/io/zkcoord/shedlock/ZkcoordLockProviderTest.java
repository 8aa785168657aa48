package io.zkcoord.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** ShedLock's rules and the provider's own (ensemble time, fencing) against a real ZooKeeper server. */
class ZkcoordLockProviderTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;

    private final List<ZkClient> clients = new ArrayList<>();
    private ZkcoordLockProvider provider;
    private ZkcoordLockProvider other;
    private String root;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @BeforeEach
    void setUp() {
        root = "/shedlock-test-" + ROOTS.incrementAndGet();
        provider = new ZkcoordLockProvider(client(), root);
        other = new ZkcoordLockProvider(client(), root);
    }

    @AfterEach
    void tearDown() {
        ClockProvider.setClock(Clock.systemUTC());
        clients.forEach(ZkClient::close);
    }

    /** A held name cannot be locked again, by another provider or by the same one. */
    @Test
    void aHeldNameCannotBeLockedAgain() {
        SimpleLock lock = take(provider, "job", Duration.ofMinutes(1), Duration.ZERO);
        assertTrue(provider.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isEmpty(), "same provider");
        assertTrue(other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isEmpty(), "other provider");
        assertTrue(other.lock(config("another-job", Duration.ofMinutes(1), Duration.ZERO)).isPresent(), "other name");
        lock.unlock();
        take(other, "job", Duration.ofMinutes(1), Duration.ZERO).unlock();
    }

    /** Names that are not well-formed UTF-16 (a lone surrogate) are names of their own: "?" does not hold them. */
    @Test
    void loneSurrogateNamesAreDistinctLocks() {
        SimpleLock question = take(provider, "?", Duration.ofMinutes(1), Duration.ZERO);
        SimpleLock high = take(other, "\uD800", Duration.ofMinutes(1), Duration.ZERO);
        SimpleLock low = take(other, "\uDBFF", Duration.ofMinutes(1), Duration.ZERO);
        low.unlock();
        high.unlock();
        question.unlock();
    }

    /** unlock() keeps the lock until lockAtLeastFor after it was taken, then frees it. */
    @Test
    void unlockKeepsTheLockUntilLockAtLeastFor() {
        long start = System.nanoTime();
        SimpleLock lock = take(provider, "job", Duration.ofMinutes(1), Duration.ofSeconds(2));
        lock.unlock();
        Optional<SimpleLock> early = other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO));
        if (System.nanoTime() - start < Duration.ofMillis(1500).toNanos()) {
            assertTrue(early.isEmpty(), "held until lockAtLeastFor");
        }
        Await.until("free after lockAtLeastFor", Duration.ofSeconds(10),
                () -> other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).map(l -> {
                    l.unlock();
                    return true;
                }).orElse(false));
        assertTrue(System.nanoTime() - start >= Duration.ofSeconds(2).toNanos() - Duration.ofMillis(50).toNanos(),
                "not freed before lockAtLeastFor");
        assertThrows(IllegalStateException.class, lock::unlock, "a second unlock");
    }

    /** A lock nobody unlocks is free once lockAtMostFor has passed. */
    @Test
    void aLockExpiresAtLockAtMostFor() {
        take(provider, "job", Duration.ofMillis(800), Duration.ZERO);
        Await.until("free after lockAtMostFor", Duration.ofSeconds(10),
                () -> other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isPresent());
    }

    /** extend returns a new lock that holds past the old lockAtMostFor; the old one is then unusable. */
    @Test
    void extendReturnsANewLockAndRetiresTheOld() {
        SimpleLock lock = take(provider, "job", Duration.ofMillis(1500), Duration.ZERO);
        long token = ((ZkcoordSimpleLock) lock).fencingToken();
        SimpleLock extended = lock.extend(Duration.ofMinutes(1), Duration.ZERO).orElseThrow();
        assertEquals(token, ((ZkcoordSimpleLock) extended).fencingToken(), "an extension keeps the token");
        assertThrows(IllegalStateException.class, lock::unlock);
        assertThrows(IllegalStateException.class, () -> lock.extend(Duration.ofMinutes(1), Duration.ZERO));
        Await.holds("held past the first lockAtMostFor", Duration.ofSeconds(3),
                () -> other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isEmpty());
        extended.unlock();
        assertTrue(other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isPresent());
    }

    /** Extending an unlocked lock throws IllegalStateException; an expired one gives empty. */
    @Test
    void extendOfUnlockedThrowsAndOfExpiredIsEmpty() throws Exception {
        SimpleLock unlocked = take(provider, "job", Duration.ofMinutes(1), Duration.ZERO);
        unlocked.unlock();
        assertThrows(IllegalStateException.class, () -> unlocked.extend(Duration.ofMinutes(1), Duration.ZERO));

        SimpleLock expired = take(provider, "other-job", Duration.ofMillis(300), Duration.ZERO);
        Await.until("the lock expired", Duration.ofSeconds(10),
                () -> ensembleNow() > lockedAt(expired) + 300);
        assertTrue(expired.extend(Duration.ofMinutes(1), Duration.ZERO).isEmpty());
        assertTrue(other.lock(config("other-job", Duration.ofMinutes(1), Duration.ZERO)).isPresent(),
                "an expired lock that could not be extended is free");
        SimpleLock valid = take(provider, "third", Duration.ofMinutes(1), Duration.ZERO);
        assertThrows(IllegalArgumentException.class, () -> valid.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)));
        valid.unlock();
    }

    /** A holder whose lock expired and was taken cannot unlock or extend its successor's lock. */
    @Test
    void aStaleHolderLeavesItsSuccessorsLockInPlace() {
        SimpleLock stale = take(provider, "job", Duration.ofMillis(500), Duration.ZERO);
        SimpleLock staleToo = take(provider, "job-2", Duration.ofMillis(500), Duration.ZERO);
        Await.until("the successor took it", Duration.ofSeconds(10),
                () -> other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isPresent());
        Await.until("the successor took the second", Duration.ofSeconds(10),
                () -> other.lock(config("job-2", Duration.ofMinutes(1), Duration.ZERO)).isPresent());
        stale.unlock();
        assertTrue(staleToo.extend(Duration.ofMinutes(5), Duration.ZERO).isEmpty(), "a stale extend");
        ZkcoordLockProvider third = new ZkcoordLockProvider(client(), root);
        assertTrue(third.lock(config("job", Duration.ofMinutes(1), Duration.ZERO)).isEmpty(), "the successor still holds");
        assertTrue(third.lock(config("job-2", Duration.ofMinutes(1), Duration.ZERO)).isEmpty(), "the successor still holds");
    }

    /** Tokens strictly increase from holder to holder, and the provider tells a job its token. */
    @Test
    void fencingTokensIncrease() {
        ZkcoordSimpleLock first = (ZkcoordSimpleLock) take(provider, "job", Duration.ofMinutes(1), Duration.ZERO);
        assertEquals(first.fencingToken(), provider.fencingToken("job").orElseThrow());
        first.unlock();
        assertTrue(provider.fencingToken("job").isEmpty());
        ZkcoordSimpleLock second = (ZkcoordSimpleLock) take(other, "job", Duration.ofMinutes(1), Duration.ZERO);
        assertTrue(second.fencingToken() > first.fencingToken());
        second.unlock();
    }

    /** 8 threads on 2 names, 4 per provider, each incrementing a counter under the lock: no update is lost. */
    @Test
    void fuzzEightThreadsTwoNamesExactCount() throws Exception {
        int perThread = 20;
        long[] counters = new long[2];
        AtomicInteger inside0 = new AtomicInteger();
        AtomicInteger inside1 = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                ZkcoordLockProvider p = t % 2 == 0 ? provider : other;
                int n = t % 4 < 2 ? 0 : 1;
                AtomicInteger inside = n == 0 ? inside0 : inside1;
                workers.add(threads.submit(() -> {
                    int done = 0;
                    while (done < perThread) {
                        Optional<SimpleLock> lock = p.lock(config("counter-" + n, Duration.ofMinutes(1), Duration.ZERO));
                        if (lock.isEmpty()) {
                            Thread.onSpinWait();
                            continue;
                        }
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        long read = counters[n];
                        Thread.yield();
                        counters[n] = read + 1;
                        inside.decrementAndGet();
                        lock.get().unlock();
                        done++;
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(120, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertEquals(0, overlaps.get(), "two holders at once");
        assertEquals(4L * perThread, counters[0]);
        assertEquals(4L * perThread, counters[1]);
    }

    /**
     * A client whose clock is an hour fast or slow decides nothing differently: ShedLock's own clock
     * (ClockProvider, which makes createdAt) is skewed, and lock configurations carry the skewed
     * createdAt, yet a live lock is not stolen and an expired one is taken on time.
     */
    @Test
    void aSkewedClientClockDecidesNothingDifferently() {
        for (Duration skew : List.of(Duration.ofHours(1), Duration.ofHours(-1))) {
            String name = "skew-" + skew.isNegative();
            ClockProvider.setClock(Clock.systemUTC());
            SimpleLock live = take(provider, name, Duration.ofMinutes(10), Duration.ZERO);
            ClockProvider.setClock(Clock.offset(Clock.systemUTC(), skew));
            assertTrue(other.lock(skewedConfig(name, Duration.ofMinutes(1))).isEmpty(), "a live lock is not stolen, skew " + skew);
            live.unlock();
            SimpleLock mine = other.lock(skewedConfig(name, Duration.ofMillis(700))).orElseThrow();
            long start = System.nanoTime();
            Await.until("an expired lock is free, skew " + skew, Duration.ofSeconds(10),
                    () -> provider.lock(skewedConfig(name, Duration.ofMinutes(1))).isPresent());
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(500).toNanos(),
                    "not freed long before lockAtMostFor, skew " + skew);
            assertTrue(mine.extend(Duration.ofMinutes(1), Duration.ZERO).isEmpty(), "an expired lock is not extended");
        }
    }

    /**
     * A holder killed with SIGKILL keeps its lock until lockAtMostFor, and not much longer: a
     * ShedLock job whose machine died is not re-run at once.
     */
    @Test
    void aKilledHolderKeepsTheLockUntilLockAtMostFor() throws Exception {
        long atMost = 4_000;
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HolderProcess.class.getName(),
                server.getConnectString(), root, "job", Long.toString(atMost))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        long lockedBy;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            long before = System.nanoTime();
            String line = out.readLine();
            lockedBy = System.nanoTime();
            assertTrue(line != null && line.startsWith("LOCKED "), "the child locked: " + line);
            child.destroyForcibly();   // SIGKILL
            assertTrue(child.waitFor(10, TimeUnit.SECONDS));
            assertTrue(lockedBy > before);
        } finally {
            child.destroyForcibly();
        }
        SimpleLock[] taken = new SimpleLock[1];
        Await.until("free after lockAtMostFor", Duration.ofMillis(atMost + 5_000), () -> {
            Optional<SimpleLock> lock = other.lock(config("job", Duration.ofMinutes(1), Duration.ZERO));
            lock.ifPresent(l -> taken[0] = l);
            return lock.isPresent();
        });
        long after = System.nanoTime() - lockedBy;
        // The child locked before it printed, so the lock may expire a little before lockedBy + atMost.
        assertTrue(after >= TimeUnit.MILLISECONDS.toNanos(atMost - 1_000), "held after its holder died: " + after / 1_000_000 + " ms");
        assertTrue(after <= TimeUnit.MILLISECONDS.toNanos(atMost + 2_000), "not much longer: " + after / 1_000_000 + " ms");
        taken[0].unlock();
    }

    /** Bad arguments fail at once. */
    @Test
    void badArgumentsFailEarly() {
        assertThrows(IllegalArgumentException.class, () -> new ZkcoordLockProvider(null, "/x"));
        assertThrows(IllegalArgumentException.class, () -> new ZkcoordLockProvider(clients.get(0), "/"));
        assertThrows(IllegalArgumentException.class, () -> new ZkcoordLockProvider(clients.get(0), "x"));
        assertThrows(IllegalArgumentException.class, () -> provider.lock(null));
    }

    /** Names with slashes, spaces and unicode are locks of their own. */
    @Test
    void awkwardNamesWork() {
        SimpleLock a = take(provider, "reports/daily", Duration.ofMinutes(1), Duration.ZERO);
        SimpleLock b = take(provider, "reports%2Fdaily", Duration.ofMinutes(1), Duration.ZERO);
        SimpleLock c = take(provider, "snow \u2603 man", Duration.ofMinutes(1), Duration.ZERO);
        assertTrue(other.lock(config("reports/daily", Duration.ofMinutes(1), Duration.ZERO)).isEmpty());
        a.unlock();
        b.unlock();
        c.unlock();
    }

    private ZkClient client() {
        ZkClient client = ZkClient.builder().connectString(server.getConnectString()).sessionTimeout(Duration.ofSeconds(4)).build();
        clients.add(client);
        return client;
    }

    private static SimpleLock take(ZkcoordLockProvider p, String name, Duration atMost, Duration atLeast) {
        Optional<SimpleLock> lock = p.lock(config(name, atMost, atLeast));
        assertFalse(lock.isEmpty(), name + " was free");
        return lock.get();
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    private static LockConfiguration skewedConfig(String name, Duration atMost) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, Duration.ZERO);
    }

    private long ensembleNow() {
        try {
            return clients.get(0).zooKeeper().setData(root, new byte[0], -1).getMtime();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static long lockedAt(SimpleLock lock) {
        return ((ZkcoordSimpleLock) lock).grant().lockedAtMillis();
    }
}
