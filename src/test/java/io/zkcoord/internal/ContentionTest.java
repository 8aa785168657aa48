package io.zkcoord.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Contention}: when a release whose view showed its node alone tries to remove the
 * directory, as a pure function of what the client saw. No server: child versions are written as
 * a server would report them (every child create and delete adds 1).
 */
class ContentionTest {

    private static final long LIFETIME = 0x100000005L;
    private static final long NEXT_LIFETIME = 0x100000042L;

    /** A directory nobody was refused in: every view of our node alone tries the removal, fresh or stale. */
    @Test
    void uncontendedReleasesTryTheRemoval() {
        Contention c = Contention.made(LIFETIME).read(LIFETIME, 1);
        assertTrue(c.mayRemove(), "a stale view, never refused");
        assertTrue(c.grantedAlone().mayRemove(), "a fresh read of our node alone");
        assertTrue(Contention.UNKNOWN.mayRemove());
        assertTrue(Contention.UNKNOWN.read(LIFETIME, 7).grantedAlone().mayRemove(), "first read of a directory");
    }

    /** After a refused removal, neither a stale view nor a fresh read of our node alone tries it again. */
    @Test
    void aRefusalMarksTheDirectoryContended() {
        Contention c = Contention.made(LIFETIME).read(LIFETIME, 1).grantedAlone().refused();
        assertFalse(c.mayRemove(), "a watch grant on a stale view");
        c = c.read(LIFETIME, 4);
        c = c.grantedAlone();
        assertFalse(c.mayRemove(), "a fresh read alone, but others came and went since the last one (1 -> 4)");
        assertEquals(4, c.probe());
    }

    /**
     * The mark ends with a quiet cycle: the fresh read of our node alone finds exactly our delete
     * and our create since the previous one (child version + 2).
     */
    @Test
    void aQuietCycleEndsTheMark() {
        Contention c = Contention.made(LIFETIME).read(LIFETIME, 1).grantedAlone().refused();
        c = c.read(LIFETIME, 9).grantedAlone(); // others were there in between: the probe is 9
        assertFalse(c.mayRemove());
        Contention quiet = c.read(LIFETIME, 11).grantedAlone();
        assertTrue(quiet.mayRemove(), "9 -> 11: our delete and our create, nobody else");
        Contention busy = c.read(LIFETIME, 13).grantedAlone();
        assertFalse(busy.mayRemove(), "9 -> 13: someone came and went while we were away");
        assertFalse(c.read(LIFETIME, 10).grantedAlone().mayRemove(), "9 -> 10 is no cycle of ours");
    }

    /** Only a grant on a fresh read of our node alone is a probe: reads that did not grant leave it. */
    @Test
    void onlyAGrantAloneIsAProbe() {
        Contention c = Contention.made(LIFETIME).read(LIFETIME, 1).refused();
        c = c.read(LIFETIME, 5); // a waiter's read, no grant
        c = c.read(LIFETIME, 7); // another one
        assertFalse(c.grantedAlone().mayRemove(), "no probe yet: a first grant alone only records one");
        assertEquals(7, c.grantedAlone().probe());
        assertEquals(Contention.NONE, c.probe());
    }

    /** A new lifetime of the directory (made again, by us or seen with another czxid) starts uncontended. */
    @Test
    void aNewLifetimeStartsAfresh() {
        Contention marked = Contention.made(LIFETIME).read(LIFETIME, 1).grantedAlone().refused();
        assertTrue(marked.read(NEXT_LIFETIME, 1).mayRemove(), "someone removed it and made it again");
        assertTrue(Contention.made(NEXT_LIFETIME).mayRemove(), "we made it again");
        assertEquals(Contention.NONE, marked.read(NEXT_LIFETIME, 1).probe(), "no probe carried over");
    }

    /**
     * A lifetime not known yet (the directory made by a transaction whose czxid was not seen) is
     * taken from the first read, without losing a mark: the mark could only be of that lifetime.
     */
    @Test
    void anUnknownLifetimeIsLearnedFromTheFirstRead() {
        Contention c = Contention.made(0).refused().read(LIFETIME, 3);
        assertEquals(LIFETIME, c.czxid());
        assertFalse(c.mayRemove());
        assertEquals(LIFETIME, Contention.made(LIFETIME).read(0, 3).czxid(), "a read without a czxid changes nothing");
    }

    /** Child version 1 (a directory with its first child) is no quiet cycle without a probe. */
    @Test
    void noProbeIsNeverQuiet() {
        Contention c = new Contention(LIFETIME, true, 1, Contention.NONE);
        assertFalse(c.grantedAlone().mayRemove());
        c = new Contention(LIFETIME, true, Contention.NONE + 2, Contention.NONE);
        assertFalse(c.grantedAlone().mayRemove());
    }

    // ------------------------------------------------------------------ two clients, modelled

    /**
     * Two clients in steady contention, modelled on one directory: A holds, B waits; each release
     * hands over to the other, who queued while it held. Each client pays one refused removal (A:
     * its fresh grant alone at the start; B: its stale view), then none in 1,000 handoffs.
     */
    @Test
    void steadyContentionPaysOneRefusalPerClient() {
        Model m = new Model();
        Model.Client a = m.client();
        Model.Client b = m.client();
        a.enqueue(); // alone: A holds on a fresh read
        b.enqueue(); // B waits behind A: its view is [A, B]
        Model.Client holder = a;
        Model.Client waiter = b;
        for (int i = 0; i < 1_000; i++) {
            holder.release(); // the waiter is still queued: a removal is refused
            waiter.grantedByWatch();
            holder.enqueue(); // queues again behind the new holder before it releases
            Model.Client t = holder;
            holder = waiter;
            waiter = t;
        }
        assertEquals(List.of(1, 1), List.of(a.refusals, b.refusals), "one refused removal per client");
        assertEquals(0, m.removals);
    }

    /**
     * A key contended once and then used again uncontended by the client that was refused: its
     * first use after the episode keeps the directory (it cannot yet tell the episode is over), the
     * next removes it. Had the other client removed the directory, the first use would (a new lifetime).
     */
    @Test
    void aKeyContendedOnceIsRemovedByItsSecondQuietUse() {
        Model m = new Model();
        Model.Client a = m.client();
        Model.Client b = m.client();
        Model.Client c = m.client();
        a.enqueue();
        b.enqueue();
        c.enqueue(); // A holds, B and C wait: B's view [A, B], C's [A, B, C]
        a.release(); // refused
        b.grantedByWatch();
        b.release(); // refused: C waits (B's view was stale)
        c.grantedAfterRead(); // C was not second: it reads again, and sees its node alone
        c.release(); // C was never refused: removes the directory
        assertEquals(1, m.removals);
        assertEquals(List.of(1, 1, 0), List.of(a.refusals, b.refusals, c.refusals));

        // The same without C's removal: A and B refused, and the directory kept by the last releaser.
        Model kept = new Model();
        Model.Client x = kept.client();
        Model.Client y = kept.client();
        x.enqueue();
        y.enqueue();
        x.release(); // refused
        y.grantedByWatch();
        x.enqueue(); // x queues behind y: y's release is refused, and x holds on the watch
        y.release();
        x.grantedByWatch();
        x.release(); // x is contended: a plain delete, the directory stays
        assertEquals(0, kept.removals);
        x.enqueue(); // uncontended use: alone on a fresh read, no probe of a quiet cycle yet
        x.release();
        assertEquals(0, kept.removals, "the first quiet use cannot tell the episode is over");
        x.enqueue(); // child version + 2 since the last: nobody came
        x.release();
        assertEquals(1, kept.removals, "the second removes the directory");
        assertEquals(List.of(1, 1), List.of(x.refusals, y.refusals));
    }

    /**
     * One directory and its clients, as the server would see them: the child version counts every
     * child create and delete; a removal succeeds only if no node is left but the releaser's.
     */
    private static final class Model {
        final long lifetime = LIFETIME;
        int cversion;
        final List<Client> queue = new ArrayList<>();
        int removals;

        Client client() {
            return new Client();
        }

        final class Client {
            Contention known = Contention.made(lifetime);
            /** The grant's view showed our node alone, and the release may try the removal. */
            boolean mayRemove;
            /** What our last read showed: nodes ahead of and behind ours. */
            List<Client> lastView = List.of();
            int refusals;

            /** Create and the pipelined read: held if first, else waiting. */
            void enqueue() {
                queue.add(this);
                cversion++;
                lastView = List.copyOf(queue);
                known = known.read(lifetime, cversion);
                if (queue.get(0) == this) {
                    grantedOnRead();
                }
            }

            /** A waiter that was second when it read: the watch grants without a new read. */
            void grantedByWatch() {
                assertEquals(this, queue.get(0));
                List<Client> view = new ArrayList<>(lastView);
                view.remove(0); // the node it watched went
                mayRemove = view.equals(List.of(this)) && known.mayRemove();
            }

            /** A waiter further back: the watch makes it read again, and that read grants. */
            void grantedAfterRead() {
                assertEquals(this, queue.get(0));
                lastView = List.copyOf(queue);
                known = known.read(lifetime, cversion);
                grantedOnRead();
            }

            private void grantedOnRead() {
                if (lastView.equals(List.of(this))) {
                    known = known.grantedAlone();
                    mayRemove = known.mayRemove();
                } else {
                    mayRemove = false;
                }
            }

            void release() {
                assertEquals(this, queue.get(0));
                if (mayRemove && queue.size() > 1) {
                    refusals++;
                    known = known.refused();
                }
                queue.remove(0);
                cversion++;
                if (mayRemove && queue.isEmpty()) {
                    removals++;
                }
            }
        }
    }
}
