package io.zkcoord.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link KnownDirectories}: which directories a release may try to remove, from what the client
 * saw (stats of its reads, its own makings and removals, refusals). No server: stats are written
 * as a server would report them.
 */
class KnownDirectoriesTest {

    private static final String DIR = "/locks/k";
    private static final long CZXID = 0x100000010L;

    /** A directory made by this client, read with its node alone: removable on a fresh or a stale view. */
    @Test
    void madeByTheLibraryAndUncontendedIsRemovable() {
        KnownDirectories known = new KnownDirectories(16);
        known.sawMade(DIR, CZXID);
        known.saw(DIR, CZXID, true, 1);
        assertTrue(known.removableOnGrant(DIR, true));
        assertTrue(known.removableOnGrant(DIR, false));
        assertTrue(known.removableOnLeave(DIR));
    }

    /** Never a directory without the library's mark, or one not known, whatever else is known. */
    @Test
    void notTheLibrarysOrUnknownIsNeverRemovable() {
        KnownDirectories known = new KnownDirectories(16);
        assertFalse(known.removableOnGrant(DIR, true), "unknown");
        known.saw(DIR, CZXID, false, 1);
        assertFalse(known.removableOnGrant(DIR, true), "made by hand");
        assertFalse(known.removableOnLeave(DIR));
        assertEquals(1, known.size());
    }

    /**
     * A refused removal makes the directory contended: no removal on a stale view, on a leave, or
     * on a fresh read, until a fresh read of our node alone two child changes after the previous
     * one (our delete and our create: nobody else's).
     */
    @Test
    void aRefusalStopsRemovalsUntilAQuietCycle() {
        KnownDirectories known = new KnownDirectories(16);
        known.sawMade(DIR, CZXID);
        known.saw(DIR, CZXID, true, 1);
        assertTrue(known.removableOnGrant(DIR, true));
        known.refused(DIR);
        assertFalse(known.removableOnGrant(DIR, false), "stale view");
        assertFalse(known.removableOnLeave(DIR), "an acquisition that gave up");
        known.saw(DIR, CZXID, true, 6);
        assertFalse(known.removableOnGrant(DIR, true), "others came and went since the last probe (1 -> 6)");
        known.saw(DIR, CZXID, true, 8);
        assertTrue(known.removableOnGrant(DIR, true), "6 -> 8: a quiet cycle");
        assertTrue(known.likelyExists(DIR));
    }

    /**
     * A grant on a stale view (a watch saw the one node ahead go) is no probe: between two fresh
     * reads two child changes apart, stale grants of this client leave the quiet-cycle check to
     * those reads, and never end the mark themselves.
     */
    @Test
    void aStaleGrantIsNoProbe() {
        KnownDirectories known = new KnownDirectories(16);
        known.sawMade(DIR, CZXID);
        known.saw(DIR, CZXID, true, 1);
        known.refused(DIR);
        known.saw(DIR, CZXID, true, 4); // a waiter's read: others ahead, no grant
        for (int i = 0; i < 3; i++) {
            assertFalse(known.removableOnGrant(DIR, false), "stale grant " + i);
        }
        known.saw(DIR, CZXID, true, 6);
        assertFalse(known.removableOnGrant(DIR, true), "the first fresh read alone only records a probe (4 -> 6 is"
                + " not seen as a cycle: 4 was no grant of ours)");
        known.saw(DIR, CZXID, true, 8);
        assertTrue(known.removableOnGrant(DIR, true), "6 -> 8: a quiet cycle");
    }

    /** The directory made again (a new lifetime) is not contended any more. */
    @Test
    void aNewLifetimeEndsTheMark() {
        KnownDirectories known = new KnownDirectories(16);
        known.sawMade(DIR, CZXID);
        known.saw(DIR, CZXID, true, 1);
        known.refused(DIR);
        known.sawGone(DIR);
        known.sawMade(DIR, CZXID + 40);
        known.saw(DIR, CZXID + 40, true, 1);
        assertTrue(known.removableOnGrant(DIR, true), "made again by this client");

        known.refused(DIR);
        known.saw(DIR, CZXID + 90, true, 1);
        assertTrue(known.removableOnGrant(DIR, false), "seen made again by someone else (another czxid)");
    }

    /** A hot key (removed and made again three times by this client) is kept, contended or not. */
    @Test
    void aHotKeyIsNeverRemoved() {
        KnownDirectories known = new KnownDirectories(16);
        long czxid = CZXID;
        for (int i = 0; i < KnownDirectories.HOT_REMAKES + 1; i++) {
            known.sawMade(DIR, czxid);
            known.saw(DIR, czxid, true, 1);
            if (i < KnownDirectories.HOT_REMAKES) {
                assertTrue(known.removableOnGrant(DIR, true), "use " + i);
                known.removed(DIR);
            }
            czxid += 10;
        }
        assertFalse(known.removableOnGrant(DIR, true), "made again " + KnownDirectories.HOT_REMAKES + " times");
    }

    /**
     * Acquisitions running per directory are counted exactly, whatever the bound of what is
     * remembered: a directory is busy until the last of them ends.
     */
    @Test
    void runningAcquisitionsAreCountedPerDirectory() {
        KnownDirectories known = new KnownDirectories(1);
        known.acquisitionStarted(DIR);
        known.acquisitionStarted(DIR);
        known.acquisitionStarted("/locks/other");
        known.sawMade("/locks/a", CZXID);
        known.sawMade("/locks/b", CZXID); // DIR is long forgotten as a known directory
        known.acquisitionEnded(DIR);
        assertTrue(known.acquiring(DIR), "one of two still runs");
        known.acquisitionEnded(DIR);
        assertFalse(known.acquiring(DIR));
        assertTrue(known.acquiring("/locks/other"));
        known.acquisitionEnded("/locks/other");
        assertFalse(known.acquiring("/locks/other"));
    }

    /** Bounded: the directories used last are remembered; the others are merely unknown. */
    @Test
    void rememberedDirectoriesAreBounded() {
        KnownDirectories known = new KnownDirectories(4);
        for (int i = 0; i < 10; i++) {
            known.sawMade("/locks/e-" + i, CZXID + i);
            known.refused("/locks/e-" + i);
        }
        assertEquals(4, known.size());
        assertFalse(known.exists("/locks/e-0"), "forgotten, with its mark");
        assertTrue(known.exists("/locks/e-9"));
    }
}
