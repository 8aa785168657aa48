package io.zkcoord.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.lock.ZkReadWriteLock;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import io.zkcoord.semaphore.ZkSemaphore;
import io.zkcoord.shard.ZkShardMember;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hostile-client matrix through the command: identity A holds and waits on a mutex, a
 * read/write lock and a semaphore in directories whose ACL gives A everything and B nothing. Then
 * {@code zkcoord run} as B ({@code --lock}, {@code --read}, {@code --write}, {@code --semaphore}),
 * authenticated by {@code --auth}, by {@code ZKCOORD_AUTH}, by {@code --auth digest:@FILE}, or not
 * at all, with and without {@code --wait} (every pair of these choices in the default build, every
 * combination in the soak): every run exits 77 at once, saying "not authorized"
 * and naming the directory, without starting its command; no node is added or removed; A's holds
 * stand, its waiters still wait, and no watch of A fires. {@code zkcoord inspect} as B says "not
 * authorized" and exits 77, for a lock directory and for a shard path. No output carries a password.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CliHostileRunTest extends CliFixture {

    private static final String A_PASSWORD = "a-pw-6Lq3Vt8Rx1";
    private static final String B_PASSWORD = "b-pw-2Jc9Hs4Mz7";
    private static final String A = "owner:" + A_PASSWORD;
    private static final String B = "stranger:" + B_PASSWORD;
    private static final String ROOT = "/cli/hostile";
    private static final String MUTEX = ROOT + "/mutex";
    private static final String RW = ROOT + "/rw";
    private static final String SEMAPHORE = ROOT + "/sem";
    private static final String SHARDS = ROOT + "/shards";
    /** "At once": room for a JVM's start on a busy 2-core machine, far below --wait 10m (ZkcoordProcess.run gives up at 60 s). */
    private static final long AT_ONCE_MILLIS = 60_000;

    private final List<ZkClient> aClients = new ArrayList<>();

    @AfterEach
    void closeA() {
        aClients.forEach(ZkClient::close);
        aClients.clear();
    }

    private ZkClient a() throws Exception {
        List<ACL> aOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest",
                DigestAuthenticationProvider.generateDigest(A))));
        ZkClient c = ZkClient.builder().connectString(server.getConnectString())
                .authorization("digest", A.getBytes(UTF_8))
                .aclProvider(path -> path.startsWith(ROOT) ? aOnly : ZooDefs.Ids.OPEN_ACL_UNSAFE)
                .build();
        aClients.add(c);
        return c;
    }

    /** How B identifies itself: extra arguments and environment. */
    private record Identity(String name, List<String> args, Map<String, String> environment) {
    }

    /** What A holds and waits on, and the options that make {@code zkcoord run} ask for it. */
    private record Target(String name, String dir, List<String> options) {
    }

    /** One run of B, measured. */
    private record Measured(String target, String identity, String waits, int status, long millis) {
    }

    /**
     * zkcoord run as B on every kind of lock, as every kind of B: refused at once, nothing started, A undisturbed.
     * Every target meets every identity once, and {@code --wait} alternates so that each target and each identity
     * runs both with and without it: 16 runs, each pair of choices covered. The soak runs all 32 combinations.
     */
    @Test
    void runAsBIsRefusedAtOnceAndALosesNothing() throws Exception {
        runAsB(false);
    }

    /** Soak: the whole matrix, every target as every identity both with and without {@code --wait} (32 runs). */
    @Tag("soak")
    @Test
    void runAsBIsRefusedAtOnceAndALosesNothingInEveryCombination() throws Exception {
        runAsB(true);
    }

    /** @param everyCombination all 32 runs; otherwise the 16 that cover every pair of choices */
    private void runAsB(boolean everyCombination) throws Exception {
        ZkClient holder = a();
        ZkClient waiter = a();
        List<String> heard = new CopyOnWriteArrayList<>();
        CoordinationListener recorder = new CoordinationListener() {
            @Override
            public void acquisitionStarted(CoordinationEvent event) {
                heard.add("started " + event);
            }

            @Override
            public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
                heard.add("granted " + event);
            }

            @Override
            public void acquisitionEnded(CoordinationEvent event, Duration waited,
                    io.zkcoord.observe.WaitOutcome outcome) {
                heard.add("ended " + event + " " + outcome);
            }

            @Override
            public void lost(CoordinationEvent event, Duration held, long fencingToken) {
                heard.add("lost " + event);
            }
        };

        ZkLease mutexHold = new ZkMutex(holder, MUTEX).acquire();
        CompletableFuture<ZkLease> mutexWaiter = new ZkMutex(waiter, MUTEX).acquireAsync();
        ZkLease writeHold = new ZkReadWriteLock(holder, RW).writeLock().acquire();
        CompletableFuture<ZkLease> readWaiter = new ZkReadWriteLock(waiter, RW).readLock().acquireAsync();
        ZkLease semHold = new ZkSemaphore(holder, SEMAPHORE, 1).acquire();
        CompletableFuture<ZkLease> semWaiter = new ZkSemaphore(waiter, SEMAPHORE, 1).acquireAsync();
        for (String dir : List.of(MUTEX, RW, SEMAPHORE)) {
            await(dir + " has A's holder and A's waiter", () -> children(holder, dir).size() == 2);
        }
        holder.addCoordinationListener(recorder);
        waiter.addCoordinationListener(recorder);
        Map<String, List<String>> before = queues(holder);
        List<String> rootBefore = children(holder, ROOT);
        // A watches every queue and every node in it: any change B could make would fire one.
        List<WatchedEvent> fired = new CopyOnWriteArrayList<>();
        Watcher watcher = fired::add;
        ZooKeeper aZk = holder.zooKeeper();
        for (Map.Entry<String, List<String>> q : before.entrySet()) {
            aZk.getChildren(q.getKey(), watcher);
            aZk.getData(q.getKey(), watcher, null);
            for (String node : q.getValue()) {
                aZk.getData(q.getKey() + "/" + node, watcher, null);
            }
        }

        Path credentials = dir.resolve("b-credentials");
        Files.writeString(credentials, B + "\n", UTF_8);
        List<Identity> identities = List.of(
                new Identity("--auth digest:USER:PASSWORD", List.of("--auth", "digest:" + B), Map.of()),
                new Identity("ZKCOORD_AUTH", List.of(), Map.of(Connection.AUTH_ENVIRONMENT, "digest:" + B)),
                new Identity("--auth digest:@FILE", List.of("--auth", "digest:@" + credentials), Map.of()),
                new Identity("anonymous", List.of(), Map.of()));
        List<Target> targets = List.of(
                new Target("--lock", MUTEX, List.of("--lock", MUTEX)),
                new Target("--read", RW, List.of("--read", RW)),
                new Target("--write", RW, List.of("--write", RW)),
                new Target("--semaphore", SEMAPHORE, List.of("--semaphore", SEMAPHORE, "--permits", "1")));
        List<Measured> measured = new ArrayList<>();
        int n = 0;
        for (int ti = 0; ti < targets.size(); ti++) {
            Target t = targets.get(ti);
            for (int ii = 0; ii < identities.size(); ii++) {
                Identity id = identities.get(ii);
                boolean[] waits = everyCombination ? new boolean[] {false, true} : new boolean[] {(ti + ii) % 2 == 1};
                for (boolean timed : waits) {
                    String ran = "ran-" + n++;
                    List<String> args = new ArrayList<>(List.of("run", connect()));
                    args.addAll(id.args());
                    args.addAll(t.options());
                    if (timed) {
                        args.addAll(List.of("--wait", "10m"));
                    }
                    args.addAll(List.of("--", "touch", ran));
                    long start = System.nanoTime();
                    ZkcoordProcess b = ZkcoordProcess.run(dir, id.environment(), args.toArray(String[]::new));
                    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    String what = t.name() + " as " + id.name() + (timed ? " --wait 10m" : "") + ": ";
                    measured.add(new Measured(t.name(), id.name(), timed ? "--wait 10m" : "no --wait",
                            b.exitStatus(), millis));
                    assertEquals(ExitStatus.NOT_AUTHORIZED, b.exitStatus(), what + b);
                    assertTrue(b.err().contains("not authorized (NOAUTH)") && b.err().contains(t.dir()),
                            what + "the message names the ACL problem and the directory: " + b.err());
                    assertTrue(millis < AT_ONCE_MILLIS, what + "refused after " + millis + " ms, not at once");
                    assertFalse(Files.exists(dir.resolve(ran)), what + "the command never started");
                    assertNoSecret(what, b);
                }
            }
        }

        assertEquals(before, queues(holder), "no node added or removed: nothing of B's is left");
        List<String> rootAfter = children(holder, ROOT);
        assertTrue(rootBefore.containsAll(rootAfter), "nothing of B's beside the queues: " + rootBefore + " then "
                + rootAfter);
        assertEquals(List.of(), fired, "no watch of A fired: nothing changed");
        // Control: the same B, on a path outside A's directories, runs its command.
        long start = System.nanoTime();
        ZkcoordProcess control = ZkcoordProcess.run(dir, "run", connect(), "--auth", "digest:@" + credentials,
                "--lock", "/cli/open", "--", "touch", "control-ran");
        measured.add(new Measured("control: --lock /cli/open", "--auth digest:@FILE", "no --wait",
                control.exitStatus(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        assertEquals(0, control.exitStatus(), control.toString());
        assertTrue(Files.exists(dir.resolve("control-ran")), "B runs a command under a lock A's ACL does not cover");
        assertEquals(List.of(), heard, "A's recipes saw nothing of B's runs");
        for (ZkLease hold : List.of(mutexHold, writeHold, semHold)) {
            assertTrue(hold.isValid() && !hold.whenLost().isDone(), "A's hold stands: " + hold);
        }
        for (CompletableFuture<ZkLease> w : List.of(mutexWaiter, readWaiter, semWaiter)) {
            assertFalse(w.isDone(), "A's waiter still waits: no wake-up, no failure");
        }
        // A's queues still work: each holder lets go and its waiter takes over.
        for (ZkLease hold : List.of(mutexHold, writeHold, semHold)) {
            hold.release();
        }
        for (CompletableFuture<ZkLease> w : List.of(mutexWaiter, readWaiter, semWaiter)) {
            try (ZkLease next = w.get(30, TimeUnit.SECONDS)) {
                assertTrue(next.isValid(), "A's waiter takes over");
            }
        }
        log(measured);
    }

    /** inspect as B, where A's ACL withholds READ: "not authorized", exit 77, for a lock directory and a shard path. */
    @Test
    void inspectAsBSaysNotAuthorized() throws Exception {
        ZkClient holder = a();
        ZkLease hold = new ZkMutex(holder, MUTEX).acquire();
        try (ZkShardMember member = new ZkShardMember(holder, SHARDS, "a-member", 4)) {
            member.start();
            await("A's member owns its shards", () -> member.owned().size() == 4);
            Path credentials = dir.resolve("b-credentials");
            Files.writeString(credentials, B + "\n", UTF_8);
            List<Measured> measured = new ArrayList<>();
            for (String path : List.of(MUTEX, SHARDS)) {
                for (List<String> auth : List.of(List.of("--auth", "digest:@" + credentials), List.<String>of())) {
                    List<String> args = new ArrayList<>(List.of("inspect", connect()));
                    args.addAll(auth);
                    args.add(path);
                    long start = System.nanoTime();
                    ZkcoordProcess b = ZkcoordProcess.run(dir, args.toArray(String[]::new));
                    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    String who = auth.isEmpty() ? "anonymous" : "--auth digest:@FILE";
                    String what = "inspect " + path + " as " + who + ": ";
                    measured.add(new Measured("inspect " + path, who, "", b.exitStatus(), millis));
                    assertEquals(ExitStatus.NOT_AUTHORIZED, b.exitStatus(), what + b);
                    assertTrue(b.err().contains("not authorized (NOAUTH)") && b.err().contains(path), what + b.err());
                    assertEquals("", b.out(), what + "nothing on stdout");
                    assertNoSecret(what, b);
                }
            }
            assertTrue(hold.isValid(), "A's hold stands");
            log(measured);
        } finally {
            hold.release();
        }
    }

    /**
     * inspect as B of a directory anyone may list whose nodes are A's alone: exit 0, every node
     * shown in queue order as not authorized, holding or waiting by its place.
     */
    @Test
    void inspectAsBShowsNodesItMayNotReadAsNotAuthorized() throws Exception {
        String listable = "/cli/listable/mutex";
        List<ACL> aOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest",
                DigestAuthenticationProvider.generateDigest(A))));
        List<ACL> readableByAnyone = List.of(aOnly.get(0), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        ZkClient holder = ZkClient.builder().connectString(server.getConnectString())
                .authorization("digest", A.getBytes(UTF_8))
                .aclProvider(path -> path.startsWith(listable + "/") ? aOnly : readableByAnyone).build();
        aClients.add(holder);
        try (ZkLease hold = new ZkMutex(holder, listable).acquire()) {
            CompletableFuture<ZkLease> waiting = new ZkMutex(holder, listable).acquireAsync();
            await("A's waiter queued", () -> children(holder, listable).size() == 2);
            ZkcoordProcess b = ZkcoordProcess.run(dir, "inspect", connect(), listable);
            assertEquals(0, b.exitStatus(), b.toString());
            List<String> lines = b.out().lines().toList();
            assertTrue(lines.get(0).startsWith(listable + ": 1 holding, 1 waiting"), b.out());
            String holderName = hold.nodePath().substring(listable.length() + 1);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("HOLDING") && l.contains("(not authorized)")
                    && l.endsWith(holderName)), b.out());
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("waiting") && l.contains("(not authorized)")), b.out());
            assertTrue(b.out().contains("2 nodes are not authorized (NOAUTH)"), b.out());
            ZkcoordProcess json = ZkcoordProcess.run(dir, "inspect", connect(), "--json", listable);
            assertEquals(0, json.exitStatus(), json.toString());
            assertTrue(json.out().contains("\"ownerReadable\":false"), json.out());
            assertNoSecret("inspect of unreadable nodes: ", b);
            waiting.cancel(true);
        }
    }

    private static void assertNoSecret(String what, ZkcoordProcess p) {
        for (String secret : List.of(A_PASSWORD, B_PASSWORD)) {
            assertFalse(p.out().contains(secret) || p.err().contains(secret), what + "a password shows: " + p);
        }
    }

    private static List<String> children(ZkClient client, String dir) {
        try {
            return client.zooKeeper().getChildren(dir, false).stream().sorted().toList();
        } catch (Exception e) {
            return List.of();
        }
    }

    /** @return every directory under {@link #ROOT} and its children, as A sees them */
    /**
     * The queues A made in this test, node by node. Not every child of {@link #ROOT}: another test's
     * shard directories there are containers the server reaps once empty, whenever its reaper runs.
     */
    private static Map<String, List<String>> queues(ZkClient a) throws Exception {
        Map<String, List<String>> all = new TreeMap<>();
        for (String dir : List.of(MUTEX, RW, SEMAPHORE)) {
            all.put(dir, children(a, dir));
        }
        return all;
    }

    private static void log(List<Measured> measured) {
        Map<String, String> rows = new LinkedHashMap<>();
        for (Measured m : measured) {
            rows.merge(m.target() + " | " + m.identity(), m.waits() + ": exit " + m.status() + ", " + m.millis()
                    + " ms", (x, y) -> x + "; " + y);
        }
        rows.forEach((k, v) -> System.out.println("MEASURED " + k + " | " + v));
    }
}
