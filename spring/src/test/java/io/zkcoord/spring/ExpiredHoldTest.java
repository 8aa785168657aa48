package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A thread whose hold ran out of time to live and who acquires again before unlocking it, as code
 * that polls {@code tryLock()} does: it behaves as Spring's Redis and JDBC registries do (false
 * while another holds, the lock if free), and the ended hold's {@code unlock()} still throws
 * {@link ConcurrentModificationException}. Two registries on two clients are two processes.
 */
class ExpiredHoldTest {

    private static TestingServer server;
    private RegistryFixture fixture;
    private ZkcoordLockRegistry registry1;
    private ZkcoordLockRegistry registry2;

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
        registry1 = new ZkcoordLockRegistry(fixture.client(), root);
        registry2 = new ZkcoordLockRegistry(fixture.client(), root);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    /**
     * Spring Integration's {@code RedisLockRegistryTests.testExpireTwoRegistries}, ported: registry 1
     * holds "foo" for 100 ms, the hold runs out, registry 2 takes "foo", and registry 1's thread
     * asks again with {@code tryLock()}: false (it threw {@code IllegalStateException} before).
     */
    @Test
    void testExpireTwoRegistries() throws Exception {
        ZkcoordLock lock1 = registry1.obtain("foo");
        Lock lock2 = registry2.obtain("foo");
        assertThat(lock1.tryLock(Duration.ZERO, Duration.ofMillis(100))).isTrue();
        assertThat(lock2.tryLock()).isFalse();
        Await.until("registry 2 takes foo once registry 1's hold ran out", Duration.ofSeconds(20), lock2::tryLock);
        assertThat(lock1.tryLock()).isFalse();

        // The rest of the rule: the ended hold's unlock still throws, and a later tryLock is a plain one.
        assertThatThrownBy(lock1::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock1::unlock).isInstanceOf(IllegalStateException.class);
        assertThat(lock1.tryLock()).isFalse();
        lock2.unlock();
        assertThat(lock1.tryLock()).isTrue();
        lock1.unlock();
    }

    /**
     * The lock is free after the ttl: tryLock() takes it without the ended hold being unlocked, with
     * a higher fencing token; the new hold unlocks as usual, then the ended hold's unlock throws.
     */
    @Test
    void tryLockTakesAFreeLockOverTheEndedHold() throws Exception {
        ZkcoordLock lock = registry1.obtain("free");
        List<HoldLossListener.Cause> losses = new CopyOnWriteArrayList<>();
        lock.addLossListener((l, owner, token, cause) -> losses.add(cause));
        lock.lock(Duration.ofMillis(200));
        long expired = lock.fencingToken();
        Await.until("the ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());

        assertThat(lock.tryLock()).as("free: taken").isTrue();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        long renewed = lock.fencingToken();
        assertThat(renewed).isGreaterThan(expired);
        assertThat(fixture.freeFor(registry2, "free")).as("held against another client").isFalse();
        assertThat(lock.tryLock()).as("reentrant on the new hold").isTrue();
        lock.unlock();
        lock.unlock();
        assertThat(fixture.freeFor(registry2, "free")).as("the new hold released").isTrue();
        assertThatThrownBy(lock::unlock).as("the ended hold's unlock").isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock::unlock).as("nothing left").isInstanceOf(IllegalStateException.class);
        assertThat(losses).containsExactly(HoldLossListener.Cause.TTL_EXPIRED);
    }

    /** A nested ended hold: the new hold goes on top, and each unlock the nesting owed still throws. */
    @Test
    void aNestedEndedHoldKeepsEveryOwedUnlock() throws Exception {
        ZkcoordLock lock = registry1.obtain("nested");
        lock.lock(Duration.ofMillis(200));
        lock.lock();
        Await.until("the ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());
        assertThatThrownBy(lock::unlock).as("inner unlock").isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThatThrownBy(lock::unlock).as("outer unlock").isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock::unlock).as("nothing left").isInstanceOf(IllegalStateException.class);
    }

    /** lock() after an ended hold waits for the other holder, then holds with a higher token. */
    @Test
    void lockAfterAnEndedHoldWaitsForTheOtherHolder() throws Exception {
        waitsForTheOtherHolder("lock", lock -> {
            lock.lock();
            return true;
        });
    }

    /** lockInterruptibly() likewise. */
    @Test
    void lockInterruptiblyAfterAnEndedHoldWaitsForTheOtherHolder() throws Exception {
        waitsForTheOtherHolder("interruptibly", lock -> {
            lock.lockInterruptibly();
            return true;
        });
    }

    /** A timed tryLock likewise, and with ttl. */
    @Test
    void timedTryLockAfterAnEndedHoldWaitsForTheOtherHolder() throws Exception {
        waitsForTheOtherHolder("timed", lock -> lock.tryLock(30, TimeUnit.SECONDS));
        waitsForTheOtherHolder("timed-ttl", lock -> lock.tryLock(Duration.ofSeconds(30), Duration.ofMinutes(1)));
    }

    /**
     * Acquisitions that give up after an ended hold (a timed tryLock running out, an interrupted
     * lockInterruptibly) leave the ended hold as it was: its unlock throws, and no node is left.
     */
    @Test
    void anAcquisitionThatGivesUpLeavesTheEndedHold() throws Exception {
        ZkcoordLock lock = registry1.obtain("gives-up");
        ZkcoordLock other = registry2.obtain("gives-up");
        lock.lock(Duration.ofMillis(200));
        long expired = lock.fencingToken();
        Await.until("the other client takes it", Duration.ofSeconds(20), other::tryLock);

        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(lock.tryLock(Duration.ofMillis(200), Duration.ofSeconds(5))).isFalse();
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(lock.fencingToken()).as("still the ended hold").isEqualTo(expired);
        assertThat(lock.waitingThreads()).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        other.unlock();
        assertThat(fixture.freeFor(registry2, "gives-up")).as("no node of the given-up waits left").isTrue();
    }

    /**
     * On a thread of its own: hold {@code key} for 200 ms and let it run out; the other client takes
     * it; {@code acquire} then must wait until the other client unlocks, and gets a higher token.
     */
    private void waitsForTheOtherHolder(String key, Acquire acquire) throws Exception {
        ZkcoordLock lock = registry1.obtain(key);
        ZkcoordLock other = registry2.obtain(key);
        CountDownLatch ended = new CountDownLatch(1);
        CountDownLatch otherHolds = new CountDownLatch(1);
        Future<long[]> holder = fixture.submit(() -> {
            lock.lock(Duration.ofMillis(200));
            long expired = lock.fencingToken();
            Await.until("the ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());
            ended.countDown();
            otherHolds.await();
            boolean granted = acquire.run(lock);
            long renewed = lock.fencingToken();
            lock.unlock();
            Class<?> owed = null;
            try {
                lock.unlock();
            } catch (ConcurrentModificationException e) {
                owed = e.getClass();
            }
            assertThat(owed).as("the ended hold's unlock").isEqualTo(ConcurrentModificationException.class);
            return new long[] {granted ? 1 : 0, expired, renewed};
        });
        assertThat(ended.await(20, TimeUnit.SECONDS)).isTrue();
        Await.until("the other client takes it", Duration.ofSeconds(20), other::tryLock);
        long othersToken = other.fencingToken();
        otherHolds.countDown();
        Await.until("the first thread waits in ZooKeeper", Duration.ofSeconds(20), () -> lock.waitingThreads() == 1);
        assertThat(holder.isDone()).as("not granted while the other holds").isFalse();
        other.unlock();
        long[] result;
        try {
            result = holder.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError(key + ": " + e.getCause(), e.getCause());
        }
        assertThat(result[0]).as("granted").isEqualTo(1);
        assertThat(result[2]).as("token above the ended hold's and the other holder's")
                .isGreaterThan(result[1]).isGreaterThan(othersToken);
    }

    @FunctionalInterface
    private interface Acquire {
        boolean run(ZkcoordLock lock) throws Exception;
    }
}
