package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Edge cases of the registry's locks against a real ZooKeeper server: nesting, interrupts, dropped objects. */
class LockEdgeCasesTest {

    private static TestingServer server;
    private RegistryFixture fixture;
    private ZkcoordLockRegistry registry;
    private ZkcoordLockRegistry other;

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
        registry = new ZkcoordLockRegistry(fixture.client(), root);
        other = new ZkcoordLockRegistry(fixture.client(), root);
    }

    @AfterEach
    void tearDown() {
        Thread.interrupted();
        fixture.close();
    }

    /**
     * A nested hold whose ttl ran out: every unlock() of the nesting throws
     * ConcurrentModificationException (the outer one in a finally block must not turn it into "does
     * not hold"), and after the last one the thread can take the lock again (a tryLock between
     * them is ExpiredHoldTest's).
     */
    @Test
    void everyUnlockOfANestedExpiredHoldThrowsConcurrentModification() throws Exception {
        ZkcoordLock lock = registry.obtain("nested");
        lock.lock(Duration.ofMillis(300));
        lock.lock();
        Await.until("the ttl ended the hold", Duration.ofSeconds(10), () -> !lock.isHeldByCurrentThread());
        assertThatThrownBy(lock::unlock).as("inner unlock").isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock::unlock).as("outer unlock").isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock::unlock).as("nothing left to unlock").isInstanceOf(IllegalStateException.class);
        Await.until("the expired node is gone", Duration.ofSeconds(20), () -> {
            try {
                return fixture.freeFor(other, "nested");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    /**
     * tryLock() of Lock never throws for an interrupt: it takes its look and keeps the interrupt
     * status. (A look is bounded in time, so on a loaded machine one may come back false: the free
     * lock must be taken by one of the looks.)
     */
    @Test
    void tryLockOfAnInterruptedThreadTakesItsLookAndKeepsTheInterrupt() {
        ZkcoordLock lock = registry.obtain("interrupted");
        Await.until("an interrupted thread's tryLock() takes the free lock", Duration.ofSeconds(30), () -> {
            Thread.currentThread().interrupt();
            boolean held = lock.tryLock();
            assertThat(Thread.interrupted()).as("interrupt status kept").isTrue();
            return held;
        });
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    /**
     * A renewal that lands while the old ttl's timer is already firing (here: the timer thread waits
     * for the lock's monitor, held by the test) wins: the renewal returned normally, so the hold
     * must not end at the old deadline.
     */
    @Test
    void aRenewalThatRacesTheFiringTimerKeepsTheHold() throws Exception {
        ZkcoordLock lock = registry.obtain("racing");
        lock.lock(Duration.ofMillis(200));
        synchronized (lock) {
            Await.until("the ttl timer fired and waits for the lock", Duration.ofSeconds(10),
                    () -> Thread.getAllStackTraces().keySet().stream().anyMatch(t ->
                            t.getName().startsWith("zkcoord-lock-ttl-") && !t.getName().contains("end")
                                    && t.getState() == Thread.State.BLOCKED));
            registry.renewLock("racing", Duration.ofMinutes(1));
        }
        Await.holds("the renewed hold stays", Duration.ofSeconds(1), lock::isHeldByCurrentThread);
        assertThat(fixture.freeFor(other, "racing")).isFalse();
        lock.unlock();
    }

    /**
     * Keys that are not well-formed UTF-16 (a lone surrogate) are distinct keys: they neither share a
     * node with "?" (what a UTF-8 encoder writes for them) nor with each other.
     */
    @Test
    void loneSurrogateKeysDoNotShareANode() throws Exception {
        ZkcoordLock question = registry.obtain("?");
        question.lock();
        assertThat(fixture.freeFor(other, "\uD800")).as("\\uD800 is not ?").isTrue();
        ZkcoordLock high = registry.obtain("\uD800");
        high.lock();
        assertThat(fixture.freeFor(other, "\uDBFF")).as("\\uDBFF is not \\uD800").isTrue();
        assertThat(registry.path("\uD800")).isNotEqualTo(registry.path("\uDBFF")).isNotEqualTo(registry.path("?"));
        high.unlock();
        question.unlock();
    }

    /** Under the root path "/", the key "zookeeper" does not land in ZooKeeper's own /zookeeper subtree. */
    @Test
    void theKeyZookeeperUnderTheRootWorks() throws Exception {
        ZkcoordLockRegistry atRoot = new ZkcoordLockRegistry(fixture.client(), "/");
        ZkcoordLock lock = atRoot.obtain("zookeeper");
        assertThat(lock.tryLock(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(atRoot.path("zookeeper")).isNotEqualTo("/zookeeper");
        lock.unlock();
        assertThatThrownBy(() -> new ZkcoordLockRegistry(fixture.client(), "/zookeeper/locks"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A lock object dropped by expireUnusedOlderThan while idle, and then locked by a thread that had
     * obtained it before, is held: renewLock by its key renews that hold instead of claiming the
     * thread holds nothing, and obtain returns the object in use.
     */
    @Test
    void aDroppedObjectLockedAfterwardsCanBeRenewedByKey() throws Exception {
        ZkcoordLock lock = registry.obtain("dropped");
        registry.expireUnusedOlderThan(0);
        lock.lock(Duration.ofSeconds(30));
        try {
            registry.renewLock("dropped", Duration.ofSeconds(30));
            assertThat(registry.obtain("dropped")).isSameAs(lock);
        } finally {
            lock.unlock();
        }
    }
}
