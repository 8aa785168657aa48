package io.zkcoord.nemesis;

import io.zkcoord.nemesis.History.Event;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads a run's history and lists every violation; pure (no server, no clock), so it is tested on hand-written
 * histories. The rules:
 *
 * <ol>
 *   <li><b>Holds.</b> A hold runs from its grant ({@code ok acquire}, or {@code event elected}) to the first of:
 *       {@code invoke release}, {@code event lost}, {@code event revoked}, {@code event conn LOST}, the SIGKILL of
 *       its process, the end of the history. Two conflicting holds of one path (exclusive with anything, shared
 *       with exclusive) must not overlap, unless the earlier one was <em>told</em> it may have lost its hold
 *       before the later began ({@code event conn SUSPENDED} of its session, or a loss) or its process was paused
 *       (SIGSTOP) in between, or the later one's process was paused between its request and its grant (its grant
 *       was recorded late). A semaphore's holds: never more than its permits at once, by the same rule.</li>
 *   <li><b>Tokens.</b> Per path, the tokens of exclusive grants strictly increase in grant order (same excuses
 *       for a late-recorded grant); an election leader may be told {@code elected} again with its own epoch.</li>
 *   <li><b>The register.</b> No accepted write carries a token lower than the one it overwrote (a stale write
 *       accepted: by the resource for fenced workloads, by the server for guarded commits); no two accepted
 *       writes produced the same count (a lost update); the final count lies between the accepted increments and
 *       the accepted plus the unknown ones (an {@code info} answer, or a write invoked by a process that never
 *       recorded its answer: killed in between).</li>
 *   <li><b>Caches.</b> A cache never shows a node's value older than one it showed before: per process and path,
 *       the {@code mzxid} of each {@code event seen} {@code created} or {@code changed} is not below the last one
 *       shown ({@code stale value shown}), nor equal to it (an invented change: {@code change shown twice}). Each cache's dump after the writes ended ({@code event cache-node}) equals the
 *       tree the nemesis read then ({@code final cache-node}), node for node: path, {@code czxid}, {@code mzxid},
 *       version, data ({@code cache differs}). So does each copy a cache recorded in a quiet round after a heal of
 *       the schedule ({@code event round-node}, token = the round) with that round's tree ({@code round
 *       cache-node}).</li>
 *   <li><b>Liveness.</b> After the final heal, every workload is granted again; every client process exits
 *       when asked; no node is left in any workload's directory.</li>
 *   <li><b>One clock.</b> Every client process's first event comes after the nemesis launched it.</li>
 * </ol>
 */
final class Checker {

    private Checker() {
    }

    /** A broken rule. */
    record Violation(String workload, String rule, long time, String detail) {
        @Override
        public String toString() {
            return workload + ": " + rule + " at " + time + ": " + detail;
        }
    }

    /** Counts per workload, for the report. */
    static final class Stats {
        long operations;
        long grants;
        long writesAccepted;
        long writesUnknown;
        long staleRefused;
        long violations;
        long longestUnavailableNanos;
        /** Cache dumps compared with the tree after the final heal (cache workloads). */
        long cachesCompared;
        /** Quiet rounds after a heal of the schedule whose tree was compared with at least one cache's copy. */
        long roundsCompared;
        /** Cache copies compared with their round's tree, all rounds together. */
        long roundCopiesCompared;
        /** Values a cache showed (cache workloads). */
        long valuesShown;
    }

    /** What the checker found. */
    record Result(List<Violation> violations, Map<String, Stats> stats, Map<String, long[]> faults) {
    }

    private enum Mode { EXCLUSIVE, SHARED, PERMITS }

    private static final class Hold {
        final Event grant;
        final long invoked;
        final Mode mode;
        final int permits;
        final List<String> paths;
        long end = Long.MAX_VALUE;
        final List<Long> warned = new ArrayList<>(); // SUSPENDED (or loss) notices during the hold

        Hold(Event grant, long invoked, Mode mode, int permits, List<String> paths) {
            this.grant = grant;
            this.invoked = invoked;
            this.mode = mode;
            this.permits = permits;
            this.paths = paths;
        }

        String who() {
            return grant.process() + "/" + grant.workload() + " token " + grant.token() + " [" + grant.time() + ".."
                    + (end == Long.MAX_VALUE ? "end" : Long.toString(end)) + "]";
        }
    }

    /** Checks a saved {@code history.txt} again: {@code java -cp <test class path> io.zkcoord.nemesis.Checker FILE}. */
    public static void main(String[] args) throws java.io.IOException {
        Result result = check(History.read(List.of(java.nio.file.Path.of(args[0]))));
        result.violations().forEach(System.out::println);
        System.out.println(result.violations().size() + " violations");
    }

    static Result check(List<Event> history) {
        List<Event> events = new ArrayList<>(history);
        events.sort(Comparator.comparingLong(Event::time));
        List<Violation> violations = new ArrayList<>();
        Map<String, Stats> stats = new TreeMap<>();
        Map<String, long[]> faults = new TreeMap<>();
        long last = events.isEmpty() ? 0 : events.get(events.size() - 1).time();

        // Pauses per process, and kills.
        Map<String, List<long[]>> pauses = new HashMap<>();
        Map<String, long[]> openFaults = new HashMap<>();
        for (Event e : events) {
            if (!e.process().equals("nemesis")) {
                continue;
            }
            String key = e.f() + " " + e.path() + " " + e.value();
            if (e.type().equals("start")) {
                openFaults.put(key, new long[] {e.time()});
                faults.computeIfAbsent(e.f(), k -> new long[2])[0]++;
                if (e.f().equals("pause-client")) {
                    pauses.computeIfAbsent(e.path(), k -> new ArrayList<>()).add(new long[] {e.time(), last});
                }
            } else if (e.type().equals("end")) {
                long[] started = openFaults.remove(key);
                if (started != null) {
                    faults.computeIfAbsent(e.f(), k -> new long[2])[1] += e.time() - started[0];
                }
                if (e.f().equals("pause-client")) {
                    for (long[] p : pauses.getOrDefault(e.path(), List.of())) {
                        if (p[1] == last && p[0] <= e.time()) {
                            p[1] = e.time();
                        }
                    }
                }
            }
        }

        // Holds.
        Map<String, Hold> open = new HashMap<>();       // process/workload -> current hold
        Map<String, Long> invoked = new HashMap<>();    // process/workload -> last acquire invoke
        List<Hold> holds = new ArrayList<>();
        Map<String, List<Long>> grantTimes = new HashMap<>();
        Set<String> killed = new HashSet<>();
        for (Event e : events) {
            String key = e.process() + "/" + e.workload();
            if (killed.contains(e.process())) {
                continue; // lines a process wrote between the nemesis's decision to kill it and its death
            }
            if (!e.process().equals("nemesis") && !e.workload().isEmpty()) {
                Stats s = stats.computeIfAbsent(e.workload(), k -> new Stats());
                if (e.type().equals("invoke")) {
                    s.operations++;
                }
            }
            if (e.is("invoke", "acquire")) {
                invoked.put(key, e.time());
            } else if (e.is("ok", "acquire") || e.is("event", "elected")) {
                close(open.remove(key), e.time());
                Mode mode;
                int permits = 0;
                if (e.value().startsWith("permits=")) {
                    mode = Mode.PERMITS;
                    permits = Integer.parseInt(e.value().substring("permits=".length()));
                } else {
                    mode = e.value().equals("read") ? Mode.SHARED : Mode.EXCLUSIVE;
                }
                Hold h = new Hold(e, invoked.getOrDefault(key, e.time()), mode, permits, List.of(e.path().split(",")));
                open.put(key, h);
                holds.add(h);
                stats.computeIfAbsent(e.workload(), k -> new Stats()).grants++;
                grantTimes.computeIfAbsent(e.workload(), k -> new ArrayList<>()).add(e.time());
            } else if (e.is("invoke", "release") || e.is("event", "revoked")
                    || (e.is("event", "lost") && open.containsKey(key) && open.get(key).grant.token() == e.token())) {
                close(open.remove(key), e.time());
            } else if (e.is("event", "conn")) {
                Hold h = open.get(key);
                if (h != null && e.value().equals("LOST")) {
                    close(open.remove(key), e.time());
                } else if (h != null && e.value().equals("SUSPENDED")) {
                    h.warned.add(e.time());
                }
            } else if (e.process().equals("nemesis") && e.is("start", "kill-client")) {
                killed.add(e.path());
                for (Iterator<Map.Entry<String, Hold>> it = open.entrySet().iterator(); it.hasNext();) {
                    Map.Entry<String, Hold> entry = it.next();
                    if (entry.getValue().grant.process().equals(e.path())) {
                        close(entry.getValue(), e.time());
                        it.remove();
                    }
                }
            }
        }

        // Overlaps, per path: a sweep over the grants, keeping the holds still open at each.
        Map<String, List<Hold>> byPath = new LinkedHashMap<>();
        for (Hold h : holds) {
            for (String p : h.paths) {
                byPath.computeIfAbsent(p, k -> new ArrayList<>()).add(h);
            }
        }
        for (Map.Entry<String, List<Hold>> entry : byPath.entrySet()) {
            String path = entry.getKey();
            List<Hold> list = entry.getValue();
            list.sort(Comparator.comparingLong(h -> h.grant.time()));
            List<Hold> active = new ArrayList<>();
            Hold highest = null;
            for (Hold b : list) {
                long t = b.grant.time();
                active.removeIf(a -> a.end <= t);
                List<Hold> conflicting = new ArrayList<>();
                for (Hold a : active) {
                    if (!excused(a, b, pauses) && (b.mode == Mode.PERMITS || a.mode == Mode.EXCLUSIVE
                            || b.mode == Mode.EXCLUSIVE)) {
                        conflicting.add(a);
                    }
                }
                if (b.mode == Mode.PERMITS) {
                    if (conflicting.size() + 1 > b.permits) {
                        violations.add(new Violation(b.grant.workload(), "more holders than permits", t,
                                path + ": " + (conflicting.size() + 1) + " > " + b.permits + ": " + b.who() + " with "
                                        + conflicting.stream().map(Hold::who).toList()));
                    }
                } else {
                    for (Hold a : conflicting) {
                        violations.add(new Violation(b.grant.workload(), "overlapping holds", t,
                                path + ": " + b.who() + " granted while " + a.who() + " held"));
                    }
                }
                if (b.mode == Mode.EXCLUSIVE) {
                    if (highest != null && !lateGrant(b, pauses)) {
                        boolean same = highest.grant.process().equals(b.grant.process())
                                && highest.grant.workload().equals(b.grant.workload());
                        if (b.grant.token() < highest.grant.token()
                                || (b.grant.token() == highest.grant.token() && !same)) {
                            violations.add(new Violation(b.grant.workload(), "token not increasing", t,
                                    path + ": " + b.who() + " after " + highest.who()));
                        }
                    }
                    if (highest == null || b.grant.token() >= highest.grant.token()) {
                        highest = b;
                    }
                }
                active.add(b);
            }
        }

        // The registers.
        Map<String, List<Event>> accepted = new TreeMap<>();
        Map<String, Integer> unknown = new HashMap<>();
        Map<String, String> registerWorkload = new HashMap<>();
        // Write invocations not answered yet, by process and register: a process killed (or ended)
        // between sending a write and recording its answer leaves one, whose outcome is unknown.
        Map<String, Event> unanswered = new HashMap<>();
        for (Event e : events) {
            if (!e.f().equals("write") || e.process().equals("nemesis")) {
                continue;
            }
            Stats s = stats.computeIfAbsent(e.workload(), k -> new Stats());
            registerWorkload.put(e.path(), e.workload());
            String caller = e.process() + " " + e.workload() + " " + e.path();
            if (e.type().equals("invoke")) {
                unanswered.put(caller, e);
            } else {
                unanswered.remove(caller);
            }
            switch (e.type()) {
                case "ok" -> {
                    s.writesAccepted++;
                    accepted.computeIfAbsent(e.path(), k -> new ArrayList<>()).add(e);
                    long prev = Long.parseLong(e.attr("prev"));
                    if (prev > e.token()) {
                        violations.add(new Violation(e.workload(), "stale write accepted", e.time(),
                                e.path() + ": " + e.process() + " wrote with token " + e.token()
                                        + " over token " + prev));
                    }
                }
                case "info" -> {
                    s.writesUnknown++;
                    unknown.merge(e.path(), 1, Integer::sum);
                }
                case "fail" -> {
                    if (e.value().startsWith("stale")) {
                        s.staleRefused++;
                    }
                }
                default -> { }
            }
        }
        for (Event e : unanswered.values()) {
            stats.get(e.workload()).writesUnknown++;
            unknown.merge(e.path(), 1, Integer::sum);
        }
        for (Map.Entry<String, List<Event>> entry : accepted.entrySet()) {
            Set<Long> counts = new HashSet<>();
            String wl = registerWorkload.get(entry.getKey());
            for (Event e : entry.getValue()) {
                long c = Long.parseLong(e.attr("count"));
                if (!counts.add(c)) {
                    violations.add(new Violation(wl, "lost update", e.time(),
                            entry.getKey() + ": two accepted writes made count " + c));
                }
            }
        }
        checkCaches(events, violations, stats);
        Long healed = null;
        Set<String> workloads = new HashSet<>();
        for (Event e : events) {
            // Liveness is asked of the workloads that acquire (a shard member's own name only joins and leaves).
            if (!e.process().equals("nemesis") && !e.workload().isEmpty()
                    && (e.is("invoke", "acquire") || e.is("ok", "acquire") || e.is("event", "elected"))) {
                workloads.add(e.workload());
            }
        }
        Map<String, Long> launched = new HashMap<>();
        for (Event e : events) {
            if (e.process().equals("nemesis") && e.type().equals("launch")) {
                launched.put(e.path(), e.time());
            }
            if (e.is("event", "started")) {
                Long at = launched.get(e.process());
                if (at == null || at >= e.time()) {
                    violations.add(new Violation("-", "clock", e.time(), e.process() + " started at " + e.time()
                            + " but was launched at " + at + ": System.nanoTime is not one clock here"));
                }
            }
            if (!e.process().equals("nemesis") || !e.type().equals("final")) {
                continue;
            }
            switch (e.f()) {
                case "healed" -> healed = e.time();
                case "register" -> {
                    String wl = registerWorkload.getOrDefault(e.path(), e.workload());
                    long count = Long.parseLong(Register.field(e.value(), "count"));
                    List<Event> ok = accepted.getOrDefault(e.path(), List.of());
                    long maxOk = ok.stream().mapToLong(w -> Long.parseLong(w.attr("count"))).max().orElse(0);
                    int maybe = unknown.getOrDefault(e.path(), 0);
                    if (count < ok.size() || count > ok.size() + maybe || maxOk > count) {
                        violations.add(new Violation(wl, "register count", e.time(), e.path() + ": final count "
                                + count + ", " + ok.size() + " increments acknowledged (highest " + maxOk + "), "
                                + maybe + " unknown"));
                    }
                }
                case "exit" -> {
                    if (!e.value().equals("ok")) {
                        violations.add(new Violation("-", "liveness", e.time(), e.path() + " did not finish: "
                                + e.value()));
                    }
                }
                case "leftover" -> {
                    if (!e.value().equals("0")) {
                        violations.add(new Violation(e.workload(), "liveness", e.time(), e.path() + " still holds "
                                + e.value() + " nodes after every client finished"));
                    }
                }
                default -> { }
            }
        }
        if (healed != null) {
            for (String wl : workloads) {
                long h = healed;
                boolean progressed = grantTimes.getOrDefault(wl, List.of()).stream().anyMatch(t -> t > h);
                if (!progressed) {
                    violations.add(new Violation(wl, "liveness", h, "no grant after the final heal"));
                }
            }
        }

        // Unavailability: the longest gap between grants of a workload (run start to the last grant).
        long first = events.isEmpty() ? 0 : events.get(0).time();
        for (Map.Entry<String, List<Long>> entry : grantTimes.entrySet()) {
            long prev = first;
            long longest = 0;
            for (long t : entry.getValue()) {
                longest = Math.max(longest, t - prev);
                prev = t;
            }
            stats.computeIfAbsent(entry.getKey(), k -> new Stats()).longestUnavailableNanos = longest;
        }
        for (Violation v : violations) {
            stats.computeIfAbsent(v.workload(), k -> new Stats()).violations++;
        }
        return new Result(violations, stats, faults);
    }

    /** The caches rule (see the class comment). */
    private static void checkCaches(List<Event> events, List<Violation> violations, Map<String, Stats> stats) {
        Map<String, Long> lastShown = new HashMap<>();                 // process workload path -> mzxid
        // a copy is "process workload" (the final dump) or "process workload round" (a quiet round's);
        // its tree is "workload" or "workload round"
        Map<String, Map<String, String>> dumps = new TreeMap<>();       // copy -> path -> node
        Map<String, Map<String, String>> truth = new HashMap<>();       // tree -> path -> node
        Map<String, Long> dumpedAt = new HashMap<>();
        for (Event e : events) {
            String who = e.process() + " " + e.workload();
            if (e.is("event", "seen")) {
                stats.computeIfAbsent(e.workload(), k -> new Stats()).valuesShown++;
                if (e.value().startsWith("deleted")) {
                    continue;
                }
                Long before = lastShown.put(who + " " + e.path(), e.token());
                if (before != null && e.token() < before) {
                    violations.add(new Violation(e.workload(), "stale value shown", e.time(), e.process() + " showed "
                            + e.path() + " at mzxid " + e.token() + " after mzxid " + before + ": " + e.value()));
                } else if (before != null && e.token() == before) {
                    violations.add(new Violation(e.workload(), "change shown twice", e.time(), e.process() + " showed "
                            + e.path() + " at mzxid " + e.token() + " again: " + e.value()));
                }
            } else if (e.is("event", "cache-node")) {
                dumps.computeIfAbsent(who, k -> new TreeMap<>()).put(e.path(), e.value());
            } else if (e.is("event", "cache-dump")) {
                dumps.computeIfAbsent(who, k -> new TreeMap<>());
                dumpedAt.put(who, e.time());
            } else if (e.is("event", "round-node")) {
                dumps.computeIfAbsent(who + " " + e.token(), k -> new TreeMap<>()).put(e.path(), e.value());
            } else if (e.is("event", "round-dump")) {
                dumps.computeIfAbsent(who + " " + e.token(), k -> new TreeMap<>());
                dumpedAt.put(who + " " + e.token(), e.time());
            } else if (e.process().equals("nemesis") && e.is("final", "cache-node")) {
                truth.computeIfAbsent(e.workload(), k -> new TreeMap<>()).put(e.path(), e.value());
            } else if (e.process().equals("nemesis") && e.is("round", "cache-node")) {
                truth.computeIfAbsent(e.workload() + " " + e.token(), k -> new TreeMap<>()).put(e.path(), e.value());
            }
        }
        Map<String, Set<String>> roundsCompared = new HashMap<>();   // workload -> rounds
        for (Map.Entry<String, Map<String, String>> dump : dumps.entrySet()) {
            String[] copy = dump.getKey().split(" ");
            String workload = copy[1];
            String tree = copy.length > 2 ? workload + " " + copy[2] : workload;
            Map<String, String> expected = truth.get(tree);
            if (expected == null) {
                continue; // the run ended before the nemesis read the tree
            }
            Stats s = stats.computeIfAbsent(workload, k -> new Stats());
            if (copy.length > 2) {
                s.roundCopiesCompared++;
                roundsCompared.computeIfAbsent(workload, k -> new java.util.HashSet<>()).add(copy[2]);
            } else {
                s.cachesCompared++;
            }
            List<String> differences = new ArrayList<>();
            Set<String> paths = new java.util.TreeSet<>(expected.keySet());
            paths.addAll(dump.getValue().keySet());
            for (String p : paths) {
                String want = expected.get(p);
                String got = dump.getValue().get(p);
                if (!java.util.Objects.equals(want, got)) {
                    differences.add(p + ": cache " + (got == null ? "missing" : "[" + got + "]") + ", tree "
                            + (want == null ? "missing" : "[" + want + "]"));
                }
            }
            if (!differences.isEmpty()) {
                violations.add(new Violation(workload, "cache differs", dumpedAt.getOrDefault(dump.getKey(), 0L),
                        copy[0] + " " + workload + (copy.length > 2 ? " in quiet round " + copy[2] : "") + ": "
                                + differences.size() + " nodes differ from the tree, e.g. "
                                + differences.subList(0, Math.min(3, differences.size()))));
            }
        }
        roundsCompared.forEach((w, rounds) -> stats.get(w).roundsCompared = rounds.size());
    }

    private static void close(Hold h, long at) {
        if (h != null && h.end == Long.MAX_VALUE) {
            h.end = at;
        }
    }

    /** Whether an overlap of earlier hold {@code a} with later grant {@code b} is allowed (see the class comment). */
    private static boolean excused(Hold a, Hold b, Map<String, List<long[]>> pauses) {
        long t = b.grant.time();
        for (long w : a.warned) {
            if (w <= t) {
                return true;
            }
        }
        return pausedWithin(a.grant.process(), a.grant.time(), t, pauses) || lateGrant(b, pauses);
    }

    /** Whether {@code b}'s process was paused between its request and the recording of its grant. */
    private static boolean lateGrant(Hold b, Map<String, List<long[]>> pauses) {
        return pausedWithin(b.grant.process(), b.invoked, b.grant.time(), pauses);
    }

    private static boolean pausedWithin(String process, long from, long to, Map<String, List<long[]>> pauses) {
        for (long[] p : pauses.getOrDefault(process, List.of())) {
            if (p[0] <= to && p[1] >= from) {
                return true;
            }
        }
        return false;
    }
}
