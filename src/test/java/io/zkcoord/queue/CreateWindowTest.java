package io.zkcoord.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bound on creates in flight, without a server: slots, the line's order, leaving it, passing a slot on. */
class CreateWindowTest {

    /** Fills the window: every take until the bound gets a slot at once. */
    private static CreateWindow full() {
        CreateWindow window = new CreateWindow();
        for (int i = 0; i < CreateWindow.SIZE; i++) {
            assertNull(window.take(() -> true), "slot " + i + " is free");
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
            assertNotNull(window.take(() -> sent.add(n)), "sender " + i + " waits");
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
        CreateWindow.Ticket gone = window.take(() -> sent.add("withdrawn"));
        window.take(() -> false); // abandoned after its slot was on its way: declines
        window.take(() -> sent.add("next"));
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
        window.take(() -> sent.add("first"));
        window.take(() -> sent.add("second"));
        window.release(); // to "first"
        assertNotNull(window.take(() -> sent.add("newcomer")), "the newcomer waits behind second");
        window.release();
        window.release();
        assertEquals(List.of("first", "second", "newcomer"), sent);
    }
}
