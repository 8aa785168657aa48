package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bound on creates in flight, without a server: slots, the line's order, leaving it, passing a
 * slot on; the turns between paths, and the creates that a thread is blocked on.
 */
class CreateWindowTest {

    private static final String PATH = "/locks/a";

    /** Fills the window: every take until the bound gets a slot at once. */
    private static CreateWindow full() {
        CreateWindow window = new CreateWindow();
        for (int i = 0; i < CreateWindow.SIZE; i++) {
            assertNull(window.take(PATH, false, () -> true), "slot " + i + " is free");
        }
        assertEquals(CreateWindow.SIZE, window.inFlight());
        return window;
    }

    /** Past the bound a sender waits; each release hands one slot to the first in line, in order. */
    @Test
    void slotsPassInTheOrderAsked() {
        CreateWindow window = full();
        List<Integer> sent = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int n = i;
            assertNotNull(window.take(PATH, false, () -> sent.add(n)), "sender " + i + " waits");
        }
        window.release();
        assertEquals(List.of(0), sent);
        window.release();
        window.release();
        assertEquals(List.of(0, 1, 2), sent);
        assertEquals(CreateWindow.SIZE, window.inFlight(), "the slots passed on, none freed");
        window.release();
        assertEquals(CreateWindow.SIZE - 1, window.inFlight());
    }

    /** A sender that left the line never runs; one that no longer wants its slot passes it on. */
    @Test
    void aWithdrawnOrUnwillingSenderDoesNotKeepTheSlot() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        CreateWindow.Ticket gone = window.take(PATH, false, () -> sent.add("withdrawn"));
        window.take(PATH, false, () -> false); // abandoned after its slot was on its way: declines
        window.take(PATH, false, () -> sent.add("next"));
        window.withdraw(gone);
        window.release();
        assertEquals(List.of("next"), sent);
        assertEquals(CreateWindow.SIZE, window.inFlight());
    }

    /** Nobody jumps the line: with someone waiting, a free slot goes to the line, not to a newcomer. */
    @Test
    void aNewcomerQueuesBehindTheLine() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        window.take(PATH, false, () -> sent.add("first"));
        window.take(PATH, false, () -> sent.add("second"));
        window.release(); // to "first"
        assertNotNull(window.take(PATH, false, () -> sent.add("newcomer")), "the newcomer waits behind second");
        window.release();
        window.release();
        assertEquals(List.of("first", "second", "newcomer"), sent);
    }

    /** A backlog on one path delays another path's create by one slot, not by the backlog. */
    @Test
    void pathsTakeTurns() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String name = "a" + i;
            window.take("/locks/a", false, () -> sent.add(name));
        }
        window.take("/locks/b", false, () -> sent.add("b0"));
        window.take("/locks/b", false, () -> sent.add("b1"));
        for (int i = 0; i < 5; i++) {
            window.release();
        }
        assertEquals(List.of("a0", "b0", "a1", "b1", "a2"), sent, "turns between the paths, each path in order");
    }

    /**
     * Futures on thousands of fresh paths (one create each) do not hold up a create that a thread
     * blocks on: it is sent at the next slot, or the one after.
     */
    @Test
    void aBlockedCreateGoesBeforeABacklogOfFutures() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            String name = "key-" + i;
            window.take("/locks/" + name, false, () -> sent.add(name));
        }
        assertNotNull(window.take("/locks/free", true, () -> sent.add("free")));
        assertEquals(1, window.blockedWaiting());
        window.release();
        window.release();
        assertTrue(sent.contains("free"), "sent within two slots: " + sent);
        assertEquals(0, window.blockedWaiting());
        for (int i = 0; i < 5_000; i++) {
            window.release();
        }
        assertEquals(5_001, sent.size(), "every future's create was sent too");
        assertEquals(CreateWindow.SIZE - 1, window.inFlight());
    }

    /** A create queued as a future and then blocked on ({@code waitedOn}) moves to the blocked turns. */
    @Test
    void waitedOnMovesACreateAlreadyInLine() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String name = "key-" + i;
            window.take("/locks/" + name, false, () -> sent.add(name));
        }
        CreateWindow.Ticket late = window.take("/locks/late", false, () -> sent.add("late"));
        window.waitedOn(late);
        window.release();
        window.release();
        assertTrue(sent.contains("late"), "sent within two slots: " + sent);
        window.waitedOn(late); // sent already: nothing changes
        assertEquals(0, window.blockedWaiting());
    }

    /** On one path, a blocked create never overtakes the path's earlier creates: each path keeps its order. */
    @Test
    void aBlockedCreateKeepsItsPathsOrder() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String name = "a" + i;
            window.take("/locks/a", false, () -> sent.add(name));
        }
        window.take("/locks/other", false, () -> sent.add("other"));
        window.take("/locks/a", true, () -> sent.add("a-blocked"));
        for (int i = 0; i < 5; i++) {
            window.release();
        }
        assertEquals(List.of("a0", "other", "a1", "a2", "a-blocked"), sent,
                "the blocked path's creates in their order, taking turns with the other path");
    }

    /** With blocked creates always waiting, futures still get every other slot. */
    @Test
    void blockedAndFutureCreatesAlternate() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String f = "f" + i;
            String b = "b" + i;
            window.take("/locks/f" + i, false, () -> sent.add(f));
            window.take("/locks/b" + i, true, () -> sent.add(b));
        }
        for (int i = 0; i < 8; i++) {
            window.release();
        }
        assertEquals(List.of("b0", "f0", "b1", "f1", "b2", "f2", "b3", "f3"), sent);
    }

    /** A withdrawn blocked create leaves its path among the futures' turns, or out of the turns if it was alone. */
    @Test
    void withdrawingABlockedCreate() {
        CreateWindow window = full();
        List<String> sent = new ArrayList<>();
        window.take("/locks/f", false, () -> sent.add("f"));
        window.take("/locks/b", false, () -> sent.add("b0"));
        CreateWindow.Ticket blocked = window.take("/locks/b", true, () -> sent.add("b1"));
        CreateWindow.Ticket alone = window.take("/locks/c", true, () -> sent.add("c"));
        window.withdraw(blocked);
        window.withdraw(alone);
        assertEquals(0, window.blockedWaiting());
        window.release();
        window.release();
        window.release();
        assertEquals(List.of("f", "b0"), sent);
        assertEquals(CreateWindow.SIZE - 1, window.inFlight());
    }
}
