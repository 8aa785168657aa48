package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/** The registry's locks against a real ZooKeeper server: two registries are two processes' clients. */
class ZkcoordLockRegistryTest {

    private static TestingServer server;
    private RegistryFixture fixture;
    private ZkcoordLockRegistry registry;
    private ZkcoordLockRegistry other;
    private ZkClient client;

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
        fixture = new RegistryFixture(server);
        String root = RegistryFixture.root();
        client = fixture.client();
        registry = new ZkcoordLockRegistry(client, root);
        other = new ZkcoordLockRegistry(fixture.client(), root);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    /** Every Lock and DistributedLock method holds the lock against another client until unlock. */
    @Test
    void everyLockMethodHoldsUntilUnlock() throws Exception {
        DistributedLock lock = registry.obtain("k");
        List<ThrowingRunnable> acquisitions = List.of(
                lock::lock,
                lock::lockInterruptibly,
                () -> assertThat(lock.tryLock()).isTrue(),
                () -> assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue(),
                () -> lock.lock(Duration.ofMinutes(1)),
                () -> assertThat(lock.tryLock(Duration.ofSeconds(5), Duration.ofMinutes(1))).isTrue());
        for (ThrowingRunnable acquire : acquisitions) {
            acquire.run();
            assertThat(fixture.freeFor(other, "k")).as("held against another client").isFalse();
            assertThat(fixture.freeFor(registry, "k")).as("held against another thread").isFalse();
            lock.unlock();
            assertThat(fixture.freeFor(other, "k")).as("free after unlock").isTrue();
        }
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    /** A held lock makes tryLock of another client false, and a timed one gives up in time. */
    @Test
    void tryLockGivesUpWhileAnotherHolds() throws Exception {
        registry.obtain("k").lock();
        Future<Boolean> timed = fixture.submit(() -> other.obtain("k").tryLock(300, TimeUnit.MILLISECONDS));
        assertThat(timed.get(10, TimeUnit.SECONDS)).isFalse();
        Future<Boolean> timedTtl = fixture.submit(() -> other.obtain("k").tryLock(Duration.ofMillis(300), Duration.ofSeconds(5)));
        assertThat(timedTtl.get(10, TimeUnit.SECONDS)).isFalse();
        registry.obtain("k").unlock();
    }

    /** The holding thread takes the lock again without waiting and must unlock as often. */
    @Test
    void reentrant() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        lock.lock();
        long token = lock.fencingToken();
        assertThat(lock.tryLock()).isTrue();
        lock.lock(Duration.ofMinutes(1));
        assertThat(lock.fencingToken()).isEqualTo(token);
        lock.unlock();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(fixture.freeFor(other, "k")).isFalse();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(fixture.freeFor(other, "k")).isTrue();
    }

    /** Threads of one registry and of two registries never hold together; every increment counts. */
    @Test
    void threadsAndRegistriesExcludeEachOther() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        long[] counter = {0};
        List<Future<Object>> workers = new CopyOnWriteArrayList<>();
        for (int t = 0; t < 4; t++) {
            ZkcoordLockRegistry r = t % 2 == 0 ? registry : other;
            workers.add(fixture.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    r.executeLocked("counter", () -> {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        counter[0]++;
                        inside.decrementAndGet();
                    });
                }
                return null;
            }));
        }
        for (Future<Object> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        assertThat(overlaps).hasValue(0);
        assertThat(counter[0]).isEqualTo(100);
    }

    /** Fencing tokens strictly increase from one holder to the next, across clients. */
    @Test
    void fencingTokensIncrease() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        lock.lock();
        long first = lock.fencingToken();
        lock.unlock();
        long second = fixture.submit(() -> {
            ZkcoordLock o = other.obtain("k");
            o.lock();
            try {
                return o.fencingToken();
            } finally {
                o.unlock();
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(second).isGreaterThan(first);
        assertThatThrownBy(lock::fencingToken).isInstanceOf(IllegalStateException.class);
    }

    /** unlock() by a thread that does not hold the lock throws IllegalStateException and changes nothing. */
    @Test
    void wrongThreadUnlockThrows() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
        lock.lock();
        Future<Object> wrong = fixture.submit(() -> {
            lock.unlock();
            return null;
        });
        assertThatThrownBy(() -> wrong.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(fixture.freeFor(other, "k")).isFalse();
        lock.unlock();
    }

    /**
     * A holder stuck with a ttl loses the lock on time: the next waiter (another client) gets it
     * within ttl + 4 s (room for a busy machine; without the ttl it would wait for ever, as the stuck holder's
     * session lives on), the loss listener runs, and the stuck holder's unlock() throws
     * ConcurrentModificationException.
     */
    @Test
    void ttlEndsTheHoldOfAStuckHolder() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        ZkcoordLock lock = registry.obtain("k");
        List<HoldLossListener.Cause> losses = new CopyOnWriteArrayList<>();
        lock.addLossListener((l, owner, token, cause) -> losses.add(cause));
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch unstick = new CountDownLatch(1);
        AtomicLong grantedAt = new AtomicLong();
        Future<Object> stuck = fixture.submit(() -> {
            lock.lock(ttl);
            grantedAt.set(System.nanoTime());
            held.countDown();
            unstick.await();   // the stuck holder: it does nothing until the test lets it go
            lock.unlock();
            return null;
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        ZkcoordLock next = other.obtain("k");
        Future<Long> waiter = fixture.submit(() -> {
            next.lock();
            long at = System.nanoTime();
            next.unlock();
            return at;
        });
        long nextAt = waiter.get(20, TimeUnit.SECONDS);
        Duration after = Duration.ofNanos(nextAt - grantedAt.get());
        assertThat(after).isGreaterThanOrEqualTo(ttl).isLessThan(ttl.plusSeconds(4));
        Await.until("the loss listener ran", Duration.ofSeconds(5), () -> losses.equals(List.of(HoldLossListener.Cause.TTL_EXPIRED)));
        unstick.countDown();
        assertThatThrownBy(() -> stuck.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(ConcurrentModificationException.class);
    }

    /**
     * A thread whose hold ended cannot renew it, and its unlock throws; it may acquire again before
     * that unlock (see ExpiredHoldTest), and after it as usual.
     */
    @Test
    void anEndedHoldIsNotRenewedAndItsUnlockThrows() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        lock.lock(Duration.ofMillis(300));
        Await.until("the ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());
        assertThatThrownBy(() -> registry.renewLock("k")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        awaitFree("k");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    /** A holder that renews by hand keeps the lock well past its ttl, and unlocks normally. */
    @Test
    void manualRenewalKeepsTheLock() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        lock.lock(Duration.ofMillis(800));
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() - end < 0) {
            registry.renewLock("k");
            assertThat(fixture.freeFor(other, "k")).isFalse();
            Thread.sleep(200); // the renewal pace: time passing past the ttl is what this test is about
        }
        registry.renewLock("k", Duration.ofSeconds(30));
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(fixture.freeFor(other, "k")).isTrue();
    }

    /** With a renewal scheduler, a hold with a short ttl lasts until unlock. */
    @Test
    void schedulerRenewalKeepsTheLock() throws Exception {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.initialize();
        try {
            registry.setRenewalTaskScheduler(scheduler);
            ZkcoordLock lock = registry.obtain("k");
            lock.lock(Duration.ofMillis(600));
            Await.holds("the renewed lock stays held", Duration.ofSeconds(3), lock::isHeldByCurrentThread);
            assertThat(fixture.freeFor(other, "k")).isFalse();
            lock.unlock();
            assertThat(fixture.freeFor(other, "k")).isTrue();
        } finally {
            scheduler.shutdown();
        }
    }

    /** Renewing a lock the thread does not hold throws IllegalStateException. */
    @Test
    void renewingWithoutHoldingThrows() throws Exception {
        assertThatThrownBy(() -> registry.renewLock("never-obtained")).isInstanceOf(IllegalStateException.class);
        registry.obtain("k").lock();
        Future<Object> wrong = fixture.submit(() -> {
            registry.renewLock("k", Duration.ofSeconds(1));
            return null;
        });
        assertThatThrownBy(() -> wrong.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> registry.renewLock("k", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        registry.obtain("k").unlock();
    }

    /** A renewal with a ttl gives a plain hold a time to live, which then ends it. */
    @Test
    void renewalGivesAPlainHoldATtl() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        lock.lock();
        registry.renewLock("k", Duration.ofMillis(300));
        Await.until("the new ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());
        awaitFree("k");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    /** A session that ends takes the hold with it: listeners run, unlock throws ConcurrentModificationException. */
    @Test
    void sessionLossEndsTheHold() throws Exception {
        ZkcoordLock lock = registry.obtain("k");
        List<HoldLossListener.Cause> losses = new CopyOnWriteArrayList<>();
        lock.addLossListener((l, owner, token, cause) -> losses.add(cause));
        lock.lock();
        ServerSideExpiry.expire(client.zooKeeper(), server.getConnectString(), Duration.ofSeconds(20));
        Await.until("the loss listener ran", Duration.ofSeconds(20), () -> losses.equals(List.of(HoldLossListener.Cause.SESSION_ENDED)));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        awaitFree("k");
    }

    /** Waits until another client can take {@code key}: an ended hold's node is deleted in the background. */
    private void awaitFree(String key) {
        Await.until(key + " is free", Duration.ofSeconds(20), () -> {
            try {
                return fixture.freeFor(other, key);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    /** expireUnusedOlderThan drops idle locks only: held and waited-for ones stay the same objects. */
    @Test
    void expireUnusedKeepsHeldAndWaitedForLocks() throws Exception {
        ZkcoordLock held = registry.obtain("held");
        ZkcoordLock waitedFor = registry.obtain("waited-for");
        ZkcoordLock idle = registry.obtain("idle");
        held.lock();
        ZkcoordLock blocker = other.obtain("waited-for");
        CountDownLatch blocking = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        fixture.submit(() -> {
            blocker.lock();
            blocking.countDown();
            release.await();
            blocker.unlock();
            return null;
        });
        assertThat(blocking.await(10, TimeUnit.SECONDS)).isTrue();
        Future<Boolean> waiter = fixture.submit(() -> waitedFor.tryLock(30, TimeUnit.SECONDS));
        Await.until("the waiter queued", Duration.ofSeconds(10), () -> waitedFor.waitingThreads() == 1);
        idle.lock();
        idle.unlock();

        registry.expireUnusedOlderThan(0);

        assertThat(registry.obtain("held")).isSameAs(held);
        assertThat(registry.obtain("waited-for")).isSameAs(waitedFor);
        assertThat(registry.obtain("idle")).isNotSameAs(idle);
        release.countDown();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isTrue();
        held.unlock();
        registry.expireUnusedOlderThan(60_000);
        assertThat(registry.obtain("held")).as("used within the minute").isSameAs(held);
    }

    /** obtain returns the same object for a key while the registry keeps it. */
    @Test
    void obtainReturnsTheSameObject() {
        assertThat(registry.obtain("k")).isSameAs(registry.obtain("k"));
        assertThat(registry.obtain(42)).isSameAs(registry.obtain("42"));
        assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(IllegalArgumentException.class);
    }

    /** executeLocked runs the task under the lock and returns its result. */
    @Test
    void executeLockedRunsUnderTheLock() throws Exception {
        String result = registry.executeLocked("k", () -> {
            assertThat(registry.obtain("k").isHeldByCurrentThread()).isTrue();
            assertThat(fixture.freeFor(other, "k")).isFalse();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(registry.obtain("k").isHeldByCurrentThread()).isFalse();
        assertThat(fixture.freeFor(other, "k")).isTrue();
        registry.executeLocked("k", Duration.ofSeconds(5), () -> assertThat(fixture.freeFor(other, "k")).isFalse());
    }

    /** Keys with slashes, spaces and unicode lock one node each, under the root, named as documented. */
    @Test
    void awkwardKeysWork() throws Exception {
        String[] keys = {"orders/42", "a b", "snow \u2603 man", "ключ", "", ".."};
        for (String key : keys) {
            ZkcoordLock lock = registry.obtain(key);
            lock.lock();
            assertThat(client.zooKeeper().getChildren(registry.path(key), false)).hasSize(1);
            assertThat(fixture.freeFor(other, key)).isFalse();
            lock.unlock();
        }
        assertThat(registry.path("orders/42")).endsWith("/orders%2F42");
        assertThat(registry.path("a b")).endsWith("/a%20b");
    }

    /** Bad arguments fail at once. */
    @Test
    void badArgumentsFailEarly() {
        assertThatThrownBy(() -> new ZkcoordLockRegistry(null, "/x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZkcoordLockRegistry(client, "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZkcoordLockRegistry(client, "/x/")).isInstanceOf(IllegalArgumentException.class);
        DistributedLock lock = registry.obtain("k");
        assertThatThrownBy(() -> lock.lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1), null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(lock.tryLock()).as("nothing was left held").isTrue();
        lock.unlock();
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
