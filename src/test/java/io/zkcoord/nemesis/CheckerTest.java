package io.zkcoord.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zkcoord.nemesis.History.Event;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@link Checker} on hand-written histories, no server: it passes good ones and catches each broken rule. */
class CheckerTest {

    private final List<Event> h = new ArrayList<>();

    private void add(long t, String process, String type, String f, String path, long token, String value) {
        h.add(new Event(t, process, "mutex", type, f, path, token, 1, value));
    }

    private void nemesis(long t, String type, String f, String target, String value) {
        h.add(new Event(t, "nemesis", "", type, f, target, 0, 0, value));
    }

    private void hold(String p, long from, long to, long token) {
        add(from - 1, p, "invoke", "acquire", "/l", 0, "exclusive");
        add(from, p, "ok", "acquire", "/l", token, "exclusive");
        add(to, p, "invoke", "release", "/l", token, "exclusive");
        add(to + 1, p, "ok", "release", "/l", token, "exclusive");
    }

    private void write(long t, String p, long token, long count, long prev) {
        add(t - 1, p, "invoke", "write", "/r", token, "FENCED");
        add(t, p, "ok", "write", "/r", token, "count=" + count + " prev=" + prev);
    }

    private List<String> rules() {
        return Checker.check(h).violations().stream().map(Checker.Violation::rule).toList();
    }

    /** Two holds one after the other, each writing once, the register at 2: nothing to report. */
    @Test
    void aCleanHistoryPasses() {
        hold("c1.0", 10, 20, 100);
        write(15, "c1.0", 100, 1, 0);
        hold("c2.0", 30, 40, 101);
        write(35, "c2.0", 101, 2, 100);
        nemesis(50, "final", "register", "/r", "count=2 token=101");
        assertEquals(List.of(), rules());
    }

    /** A hold granted while another is held, nobody paused or told: overlapping holds. */
    @Test
    void overlappingHoldsAreCaught() {
        hold("c1.0", 10, 30, 100);
        hold("c2.0", 20, 40, 101);
        assertEquals(List.of("overlapping holds"), rules());
    }

    /** The same overlap while the earlier holder's process was SIGSTOPped: allowed (fencing's business). */
    @Test
    void anOverlapWithAPausedHolderIsAllowed() {
        hold("c1.0", 10, 30, 100);
        nemesis(12, "start", "pause-client", "c1.0", "ms=5");
        nemesis(25, "end", "pause-client", "c1.0", "ms=5");
        hold("c2.0", 20, 40, 101);
        assertEquals(List.of(), rules());
    }

    /** The earlier holder had been told SUSPENDED (its session may be gone) before the later grant: allowed. */
    @Test
    void anOverlapAfterSuspendedIsAllowed() {
        hold("c1.0", 10, 30, 100);
        add(15, "c1.0", "event", "conn", "/l", 0, "SUSPENDED");
        hold("c2.0", 20, 40, 101);
        assertEquals(List.of(), rules());
    }

    /** A SIGKILLed holder's hold ends at the kill. */
    @Test
    void aKilledHolderHoldsNoLonger() {
        add(9, "c1.0", "invoke", "acquire", "/l", 0, "exclusive");
        add(10, "c1.0", "ok", "acquire", "/l", 100, "exclusive");
        nemesis(15, "start", "kill-client", "c1.0", "");
        hold("c2.0", 20, 40, 101);
        assertEquals(List.of(), rules());
    }

    /** What a process records after the nemesis decided to kill it (it is dying) opens no hold. */
    @Test
    void aDyingProcessOpensNoHold() {
        nemesis(15, "start", "kill-client", "c1.0", "");
        add(16, "c1.0", "ok", "acquire", "/l", 100, "exclusive");
        hold("c2.0", 20, 40, 101);
        assertEquals(List.of(), rules());
    }

    /** An accepted write whose token is below the one it overwrote. */
    @Test
    void aStaleWriteAcceptedIsCaught() {
        hold("c1.0", 10, 20, 100);
        hold("c2.0", 30, 40, 101);
        write(35, "c2.0", 101, 1, 0);
        write(45, "c1.0", 100, 2, 101);
        nemesis(50, "final", "register", "/r", "count=2 token=100");
        assertEquals(List.of("stale write accepted"), rules());
    }

    /** Two accepted writes that made the same count (an increment lost), and a final count that disagrees. */
    @Test
    void lostUpdatesAndAWrongCountAreCaught() {
        hold("c1.0", 10, 20, 100);
        write(12, "c1.0", 100, 1, 0);
        write(14, "c1.0", 100, 1, 100);
        nemesis(50, "final", "register", "/r", "count=1 token=100");
        assertEquals(List.of("lost update", "register count"), rules());
    }

    /** An unknown outcome may or may not have been applied: the final count may include it. */
    @Test
    void unknownWritesMayCount() {
        hold("c1.0", 10, 20, 100);
        write(12, "c1.0", 100, 1, 0);
        add(14, "c1.0", "info", "write", "/r", 100, "unknown count=2 prev=100");
        nemesis(50, "final", "register", "/r", "count=2 token=100");
        assertEquals(List.of(), rules());
    }

    /**
     * A write invoked by a process killed before it recorded the answer (seen in CI: killed 0.9 ms
     * after the invoke, the write applied) is unknown: the count may include it, but no more.
     */
    @Test
    void aWriteOfAKilledProcessMayCount() {
        hold("c1.0", 10, 20, 100);
        write(12, "c1.0", 100, 1, 0);
        add(14, "c1.0", "invoke", "write", "/r", 100, "FENCED");
        nemesis(15, "start", "kill-client", "c1.0", "pid=1");
        nemesis(50, "final", "register", "/r", "count=2 token=100");
        assertEquals(List.of(), rules());
        h.remove(h.size() - 1);
        nemesis(50, "final", "register", "/r", "count=3 token=100");
        assertEquals(List.of("register count"), rules());
    }

    /** A later exclusive grant with a lower token. */
    @Test
    void aTokenGoingBackIsCaught() {
        hold("c1.0", 10, 20, 100);
        hold("c2.0", 30, 40, 99);
        assertEquals(List.of("token not increasing"), rules());
    }

    /** Three leases of a two-permit semaphore at once. */
    @Test
    void moreLeasesThanPermitsAreCaught() {
        for (int i = 1; i <= 3; i++) {
            h.add(new Event(10 + i, "c" + i + ".0", "semaphore", "ok", "acquire", "/s", 100 + i, 1, "permits=2"));
        }
        assertEquals(List.of("more holders than permits"), rules());
    }

    /** Two leaders at once; then the same leader re-elected with its epoch, which is fine. */
    @Test
    void twoLeadersAreCaught() {
        h.add(new Event(10, "c1.0", "election", "event", "elected", "/e", 100, 1, ""));
        h.add(new Event(20, "c2.0", "election", "event", "elected", "/e", 101, 1, ""));
        h.add(new Event(30, "c2.0", "election", "event", "revoked", "/e", 101, 1, "SUSPENDED"));
        h.add(new Event(31, "c1.0", "election", "event", "revoked", "/e", 100, 1, "CLOSED"));
        h.add(new Event(40, "c2.0", "election", "event", "elected", "/e", 101, 1, ""));
        assertEquals(List.of("overlapping holds"), rules());
    }

    /** After the final heal: a workload never granted, a client that did not exit, a node left behind. */
    @Test
    void livenessFailuresAreCaught() {
        hold("c1.0", 10, 20, 100);
        nemesis(30, "final", "healed", "", "");
        nemesis(40, "final", "exit", "c1.0", "timeout");
        h.add(new Event(41, "nemesis", "mutex", "final", "leftover", "/l", 0, 0, "1"));
        assertEquals(List.of("liveness", "liveness", "liveness"), rules());
    }

    /** A child whose first event is before its launch: the processes do not share one clock. */
    @Test
    void processesOnDifferentClocksAreCaught() {
        nemesis(50, "launch", "client", "c1.0", "");
        h.add(new Event(40, "c1.0", "", "event", "started", "", 0, 0, ""));
        assertEquals(List.of("clock"), rules());
    }

    private void seen(long t, String process, String path, long mzxid, String kind) {
        h.add(new Event(t, process, "cache", "event", "seen", path, mzxid, 1, kind + " czxid=5 mzxid=" + mzxid));
    }

    private void cacheNode(long t, String process, String path, long mzxid) {
        h.add(new Event(t, process, "cache", process.equals("nemesis") ? "final" : "event", "cache-node", path, 0, 0,
                "czxid=5 mzxid=" + mzxid + " version=1 data=x"));
    }

    /** A cache that showed each node's values in order and ended equal to the tree: nothing to report. */
    @Test
    void aCacheThatFollowedPasses() {
        seen(10, "c1.0", "/t/a", 7, "created");
        seen(20, "c1.0", "/t/a", 9, "changed");
        seen(25, "c1.0", "/t/a", 9, "deleted");
        seen(30, "c1.0", "/t/a", 12, "created");
        seen(31, "c2.0", "/t/a", 9, "created"); // another cache is behind: allowed, it never went back
        cacheNode(40, "nemesis", "/t", 3);
        cacheNode(41, "nemesis", "/t/a", 12);
        cacheNode(50, "c1.0", "/t", 3);
        cacheNode(51, "c1.0", "/t/a", 12);
        h.add(new Event(52, "c1.0", "cache", "event", "cache-dump", "/t", 0, 0, "nodes=2"));
        assertEquals(List.of(), rules());
    }

    /** A cache that showed a node's value, then an older one; then the same one again. */
    @Test
    void aCacheGoingBackIsCaught() {
        seen(10, "c1.0", "/t/a", 9, "created");
        seen(20, "c1.0", "/t/a", 7, "changed");
        seen(30, "c1.0", "/t/a", 7, "changed");
        assertEquals(List.of("stale value shown", "change shown twice"), rules());
    }

    /** A cache that ended with an old value of one node and without another: one violation naming both. */
    @Test
    void aCacheEndingUnlikeTheTreeIsCaught() {
        cacheNode(40, "nemesis", "/t", 3);
        cacheNode(41, "nemesis", "/t/a", 12);
        cacheNode(42, "nemesis", "/t/b", 13);
        cacheNode(50, "c1.0", "/t", 3);
        cacheNode(51, "c1.0", "/t/a", 11);
        h.add(new Event(52, "c1.0", "cache", "event", "cache-dump", "/t", 0, 0, "nodes=2 quiet-not-seen"));
        List<Checker.Violation> v = Checker.check(h).violations();
        assertEquals(List.of("cache differs"), v.stream().map(Checker.Violation::rule).toList());
        org.junit.jupiter.api.Assertions.assertTrue(v.get(0).detail().contains("2 nodes differ"), v.toString());
    }

    private void roundNode(long t, String process, int round, String path, long mzxid) {
        h.add(new Event(t, process, "cache", process.equals("nemesis") ? "round" : "event",
                process.equals("nemesis") ? "cache-node" : "round-node", path, round, 0,
                "czxid=5 mzxid=" + mzxid + " version=1 data=x"));
    }

    /**
     * Two quiet rounds after heals: each copy is compared with its own round's tree, not the other's; a copy equal
     * to its round passes, one that kept an older round's value is caught, naming the round.
     */
    @Test
    void eachQuietRoundsCopyIsComparedWithThatRoundsTree() {
        roundNode(40, "nemesis", 1, "/t", 3);
        roundNode(41, "nemesis", 1, "/t/a", 12);
        roundNode(50, "c1.0", 1, "/t", 3);
        roundNode(51, "c1.0", 1, "/t/a", 12);
        h.add(new Event(52, "c1.0", "cache", "event", "round-dump", "/t", 1, 0, "nodes=2"));
        roundNode(60, "nemesis", 2, "/t", 3);
        roundNode(61, "nemesis", 2, "/t/a", 20);
        roundNode(70, "c1.0", 2, "/t", 3);
        roundNode(71, "c1.0", 2, "/t/a", 20);
        h.add(new Event(72, "c1.0", "cache", "event", "round-dump", "/t", 2, 0, "nodes=2"));
        Checker.Result passed = Checker.check(h);
        assertEquals(List.of(), passed.violations());
        assertEquals(2, passed.stats().get("cache").roundsCompared);
        assertEquals(2, passed.stats().get("cache").roundCopiesCompared);

        roundNode(73, "c2.0", 2, "/t", 3);
        roundNode(74, "c2.0", 2, "/t/a", 12); // round 1's value: it missed round 2's change
        h.add(new Event(75, "c2.0", "cache", "event", "round-dump", "/t", 2, 0, "nodes=2"));
        List<Checker.Violation> v = Checker.check(h).violations();
        assertEquals(List.of("cache differs"), v.stream().map(Checker.Violation::rule).toList());
        org.junit.jupiter.api.Assertions.assertTrue(v.get(0).detail().contains("c2.0 cache in quiet round 2"),
                v.toString());
    }
}
