package io.zkcoord.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.queue.QueueNode;
import io.zkcoord.queue.Turn;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SemaphoreRule}: "held, watch the queue, or watch one node", as a pure function of the queue and the
 * permit count. No server. Queues are built from node names ({@code sem-<32 hex>-<10 digits>}) through {@link
 * QueueNode#parse} and {@link QueueNode#queue}, as the queue core builds them from a directory listing.
 */
class SemaphoreRuleTest {

    /** The queue core hands the rule its queue sorted by sequence; node {@code i} here has sequence 10 * i + 3. */
    private static List<QueueNode> queue(int length) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < length; i++) {
            names.add(name("sem", i, 10L * i + 3));
        }
        return QueueNode.queue(names);
    }

    /** {@code kind-<32 hex, different per index>-<sequence as ten digits>}. */
    private static String name(String kind, int index, long sequence) {
        String id = String.format("%08x%08x%08x%08x", 0x5f0c9a1b + index, index * 7919, 0xa4b5c6d7 - index, index);
        return String.format("%s-%s-%010d", kind, id, sequence);
    }

    private static QueueNode node(String name) {
        return QueueNode.parse(name).orElseThrow(() -> new AssertionError("not a queue node: " + name));
    }

    // ------------------------------------------------------------------ positions

    /** For N from 1 to 6, every node at a position below N holds, whatever stands behind it. */
    @Test
    void positionsBelowThePermitsHold() {
        for (int permits = 1; permits <= 6; permits++) {
            SemaphoreRule rule = new SemaphoreRule(permits);
            List<QueueNode> q = queue(permits + 4);
            for (int p = 0; p < permits; p++) {
                assertSame(Turn.HELD, rule.decide(q, q.get(p)), "N=" + permits + ", position " + p);
            }
        }
    }

    /** Position N, the first waiter, watches the queue (the directory's children), for N from 1 to 6. */
    @Test
    void positionNWatchesTheQueue() {
        for (int permits = 1; permits <= 6; permits++) {
            SemaphoreRule rule = new SemaphoreRule(permits);
            List<QueueNode> q = queue(permits + 4);
            assertEquals(Turn.WATCH_QUEUE, rule.decide(q, q.get(permits)), "N=" + permits);
            // and still when it is the last node: nobody behind it changes that
            List<QueueNode> shortQ = queue(permits + 1);
            assertEquals(Turn.WATCH_QUEUE, rule.decide(shortQ, shortQ.get(permits)), "N=" + permits + ", last");
        }
    }

    /**
     * A node behind the first waiter watches its immediate predecessor (a waiter) and is not held when it goes:
     * exactly {@code new Turn.Watch(queue.get(p - 1), false)}, never a holder, never the first node.
     */
    @Test
    void positionsAboveNWatchTheirImmediatePredecessor() {
        for (int permits = 1; permits <= 6; permits++) {
            SemaphoreRule rule = new SemaphoreRule(permits);
            List<QueueNode> q = queue(permits + 5);
            for (int p = permits + 1; p < q.size(); p++) {
                assertEquals(new Turn.Watch(q.get(p - 1), false), rule.decide(q, q.get(p)),
                        "N=" + permits + ", position " + p);
            }
        }
    }

    /** With more permits than nodes, every node holds. */
    @Test
    void everyNodeHoldsWhenThePermitsExceedTheQueue() {
        SemaphoreRule rule = new SemaphoreRule(10);
        List<QueueNode> q = queue(4);
        for (QueueNode n : q) {
            assertSame(Turn.HELD, rule.decide(q, n));
        }
    }

    /** Positions count, not sequence values: gaps in the sequence (nodes that left) change nothing. */
    @Test
    void positionsCountNotSequenceValues() {
        SemaphoreRule rule = new SemaphoreRule(2);
        List<QueueNode> q = QueueNode.queue(List.of(
                name("sem", 0, 5), name("sem", 1, 900), name("sem", 2, 901), name("sem", 3, 4_000_000_000L)));
        assertSame(Turn.HELD, rule.decide(q, q.get(0)));
        assertSame(Turn.HELD, rule.decide(q, q.get(1)));
        assertEquals(Turn.WATCH_QUEUE, rule.decide(q, q.get(2)));
        assertEquals(new Turn.Watch(q.get(2), false), rule.decide(q, q.get(3)));
    }

    // ------------------------------------------------------------------ missing own node

    /** A node that is not in the queue (deleted, or its session ended) is MISSING, also in an empty queue. */
    @Test
    void aMissingOwnNodeIsMissing() {
        SemaphoreRule rule = new SemaphoreRule(2);
        List<QueueNode> q = queue(5);
        QueueNode gone = node(name("sem", 99, 7));
        assertSame(Turn.MISSING, rule.decide(q, gone));
        assertSame(Turn.MISSING, rule.decide(List.of(), gone));
        List<QueueNode> without = new ArrayList<>(q);
        QueueNode removed = without.remove(1);
        assertSame(Turn.MISSING, rule.decide(without, removed));
    }

    /** The own node is found by its name: an equal node parsed again from the same name gets the same answer. */
    @Test
    void theOwnNodeIsFoundByName() {
        SemaphoreRule rule = new SemaphoreRule(1);
        List<QueueNode> q = queue(3);
        for (int p = 0; p < q.size(); p++) {
            QueueNode again = node(q.get(p).name());
            assertEquals(rule.decide(q, q.get(p)), rule.decide(q, again), "position " + p);
        }
    }

    // ------------------------------------------------------------------ N = 1

    /**
     * With one permit the semaphore is a mutex (only the first node holds, the third watches the second) except
     * that the first waiter watches the queue instead of its predecessor with "held when gone".
     */
    @Test
    void onePermitIsAMutexExceptForTheFirstWaiter() {
        SemaphoreRule rule = new SemaphoreRule(1);
        List<QueueNode> q = queue(4);
        assertSame(Turn.HELD, rule.decide(q, q.get(0)));
        Turn firstWaiter = rule.decide(q, q.get(1));
        assertEquals(Turn.WATCH_QUEUE, firstWaiter);
        assertNotEquals(new Turn.Watch(q.get(0), true), firstWaiter, "a mutex's second node would watch the first");
        assertEquals(new Turn.Watch(q.get(1), false), rule.decide(q, q.get(2)));
        assertEquals(new Turn.Watch(q.get(2), false), rule.decide(q, q.get(3)));
        List<QueueNode> alone = queue(1);
        assertSame(Turn.HELD, rule.decide(alone, alone.get(0)));
    }

    // ------------------------------------------------------------------ other nodes in the directory

    /**
     * Queue nodes of other kinds (a lock's, a reader's, a writer's, an unknown kind) take a place like any
     * semaphore node: they hold a permit or wait in line, and a semaphore node may watch one of them.
     */
    @Test
    void nodesOfOtherKindsCountAsQueueEntries() {
        SemaphoreRule rule = new SemaphoreRule(2);
        List<QueueNode> q = QueueNode.queue(List.of(
                name("lock", 0, 1), name("sem", 1, 2), name("write", 2, 3), name("sem", 3, 4), name("read", 4, 5),
                name("sem", 5, 6), name("mutex", 6, 7), name("sem", 7, 8)));
        assertEquals(8, q.size());
        assertSame(Turn.HELD, rule.decide(q, q.get(1)), "second behind a lock node: holds the second permit");
        assertEquals(Turn.WATCH_QUEUE, rule.decide(q, q.get(2)), "the write node is the first waiter");
        assertEquals(new Turn.Watch(q.get(2), false), rule.decide(q, q.get(3)), "fourth: watches the write node");
        assertEquals(new Turn.Watch(q.get(4), false), rule.decide(q, q.get(5)), "watches the read node before it");
        assertEquals(new Turn.Watch(q.get(6), false), rule.decide(q, q.get(7)), "watches the unknown kind before it");
        // and a foreign node at the front holds a permit the semaphore node behind it cannot take
        SemaphoreRule one = new SemaphoreRule(1);
        assertEquals(Turn.WATCH_QUEUE, one.decide(q, q.get(1)));
    }

    /** Children that are not queue nodes (no sequence, Curator's names, other files) are left out and take no place. */
    @Test
    void childrenThatAreNotQueueNodesTakeNoPlace() {
        SemaphoreRule rule = new SemaphoreRule(1);
        List<QueueNode> q = QueueNode.queue(List.of(
                "leases", "_c_5f0c9a1b2c3d4e5f60718293a4b5c6d7-lock-0000000001", name("sem", 1, 2),
                "sem-0000000003", name("sem", 2, 4)));
        assertEquals(2, q.size(), "only the two sem nodes are queue nodes: " + q);
        assertSame(Turn.HELD, rule.decide(q, q.get(0)));
        assertEquals(Turn.WATCH_QUEUE, rule.decide(q, q.get(1)));
    }

    // ------------------------------------------------------------------ order

    /**
     * Order is by sequence only: names listed in name order (kind and attempt id would scramble them) are sorted
     * by {@link QueueNode#queue} into sequence order, and the rule answers by that order.
     */
    @Test
    void orderIsBySequenceOnly() {
        String s1 = "sem-ffffffffffffffffffffffffffffffff-0000000001";
        String s2 = "sem-00000000000000000000000000000000-0000000002";
        String w3 = "write-00000000000000000000000000000000-0000000003";
        String s4 = "sem-80000000000000000000000000000000-0000000004";
        String l5 = "lock-00000000000000000000000000000000-0000000005";
        List<String> byName = new ArrayList<>(List.of(s1, s2, w3, s4, l5));
        Collections.sort(byName);
        assertEquals(List.of(l5, s2, s4, s1, w3), byName, "name order differs from sequence order");

        List<QueueNode> q = QueueNode.queue(byName);
        List<Long> sequences = q.stream().map(QueueNode::sequence).toList();
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), sequences);

        SemaphoreRule rule = new SemaphoreRule(2);
        assertSame(Turn.HELD, rule.decide(q, node(s1)), "sequence 1 holds though its name sorts fourth");
        assertSame(Turn.HELD, rule.decide(q, node(s2)));
        assertEquals(Turn.WATCH_QUEUE, rule.decide(q, node(w3)));
        assertEquals(new Turn.Watch(node(w3), false), rule.decide(q, node(s4)));
        assertEquals(new Turn.Watch(node(s4), false), rule.decide(q, node(l5)),
                "sequence 5 is last though its name sorts first");
    }

    // ------------------------------------------------------------------ the rest of the rule

    /** The semaphore announces promotions: a waiter that comes to hold tells the node behind it. */
    @Test
    void announcesPromotion() {
        for (int permits : new int[] {1, 2, 3, 100}) {
            assertTrue(new SemaphoreRule(permits).announcesPromotion(), "N=" + permits);
        }
    }

    /** Fewer than one permit is refused with IllegalArgumentException: 0, -1 and Integer.MIN_VALUE. */
    @Test
    void fewerThanOnePermitIsRefused() {
        for (int permits : new int[] {0, -1, Integer.MIN_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SemaphoreRule(permits));
            assertTrue(e.getMessage().contains(String.valueOf(permits)), e.getMessage());
        }
        new SemaphoreRule(Integer.MAX_VALUE); // the largest count is fine
    }

    /** The rule is pure: the same queue and node give the same answer every time, and the queue is not changed. */
    @Test
    void theRuleIsPure() {
        SemaphoreRule rule = new SemaphoreRule(2);
        List<QueueNode> q = queue(6);
        List<QueueNode> copy = List.copyOf(q);
        for (int round = 0; round < 3; round++) {
            for (int p = 0; p < q.size(); p++) {
                Turn expected = p < 2 ? Turn.HELD : p == 2 ? Turn.WATCH_QUEUE : new Turn.Watch(q.get(p - 1), false);
                assertEquals(expected, rule.decide(q, q.get(p)), "round " + round + ", position " + p);
            }
        }
        assertEquals(copy, q);
    }
}
