package io.zkcoord.examples.snippets;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.examples.ExitWithParent;
import io.zkcoord.examples.LocalEnsemble;
import io.zkcoord.inspect.QueueSnapshot;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.retry.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * CI's check of the documentation's code: first that every Java block of README.md and docs/*.md
 * is the marked region of a source file ({@link SnippetText}), then that those sources do what the
 * documents say, run against a real one-server ZooKeeper ensemble ({@link LocalEnsemble}). Exits 1
 * on the first kind of problem it finds, with one line per problem.
 *
 * <p>{@code mvn -B -q -f examples/pom.xml compile exec:exec -Ddemo=snippets.Snippets}
 */
public final class Snippets {

    private final List<String> failures = new ArrayList<>();

    private Snippets() {
    }

    /**
     * @param args none
     * @throws Exception if a snippet fails in a way it does not document
     */
    public static void main(String[] args) throws Exception {
        ExitWithParent.exitWithParentProcess();
        Path root = SnippetText.findRoot(Path.of(""));
        List<String> problems = SnippetText.check(root);
        if (!problems.isEmpty()) {
            System.err.println("The documentation's code blocks do not match their sources:");
            problems.forEach(p -> System.err.println("  " + p));
            System.exit(1);
        }
        System.out.println("snippets: the " + SnippetText.countMarked(root)
                + " marked code blocks of README.md and docs/*.md match their sources");

        Snippets run = new Snippets();
        try (LocalEnsemble ensemble = LocalEnsemble.start(1, line -> { })) {
            run.all(ensemble.connectString());
        }
        if (!run.failures.isEmpty()) {
            System.err.println("Documented snippets that did not do what the documents say:");
            run.failures.forEach(f -> System.err.println("  " + f));
            System.exit(1);
        }
        System.out.println("snippets: every snippet ran and did what its document says");
    }

    private void all(String connect) throws Exception {
        QuickStart.main(new String[] {connect});
        try (ZkClient client = ZkClient.builder()
                .connectString(connect)
                .sessionTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.untilElapsed(Duration.ofSeconds(30), Duration.ofMillis(100)))
                .build()) {
            check("quick-start leaves no lock node", () -> children(client, "/locks/orders").isEmpty());

            long token = Recipes.mutex(client);
            check("mutex gives a fencing token above 0", () -> token > 0);
            Recipes.lease(client);
            Recipes.async(client);
            check("mutex, lease and async release their nodes", () -> children(client, "/locks/orders").isEmpty());
            check("tryLock of a free lock succeeds", () -> tryLock(client));
            java.util.Set<String> users = java.util.concurrent.ConcurrentHashMap.newKeySet();
            check("the first registration of a number succeeds", () -> register(client, "+1 555 0100", users));
            check("the second registration of that number is refused",
                    () -> !register(client, "+1 555 0100", users));
            check("the README's example of a key's path", () -> io.zkcoord.KeyPaths.path("/locks/registrations",
                    "+1 555 0100").equals("/locks/registrations/%2B1%20555%200100"));
            check("a number's lock leaves nothing behind", () -> children(client, "/locks/registrations").isEmpty());
            Recipes.readWrite(client);
            check("read-write releases both sides", () -> children(client, "/locks/catalog").isEmpty());

            create(client, "/accounts", "");
            create(client, "/accounts/42", "100");
            create(client, "/accounts/17", "100");
            Recipes.transfer(client, bytes("90"), bytes("110"));
            check("the multi-lock's commit wrote both accounts",
                    () -> read(client, "/accounts/42").equals("90") && read(client, "/accounts/17").equals("110"));

            Optional<Long> permit = Recipes.semaphore(client);
            check("a free semaphore grants a lease", permit::isPresent);
            long epoch = Recipes.election(client);
            check("the only participant leads with an epoch above 0", () -> epoch > 0);
            List<io.zkcoord.group.Member> members = Recipes.group(client);
            check("the group has its one member, with its data", () -> members.size() == 1
                    && members.get(0).id().equals("worker-3")
                    && new String(members.get(0).data(), StandardCharsets.UTF_8).equals("10.0.0.7:8080"));
            check("the group's member left on close", () -> children(client, "/groups/workers").isEmpty());
            client.zooKeeper().create("/config", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            client.zooKeeper().create("/config/flags", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            client.zooKeeper().create("/config/flags/dark-mode", "on".getBytes(StandardCharsets.UTF_8),
                    ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            Optional<String> darkMode = Recipes.cache(client);
            check("the cache holds the flag's value", () -> darkMode.equals(Optional.of("on")));

            java.util.Set<Integer> owned = Recipes.shards(client);
            check("the only shard member owns all 16 shards", () -> owned.size() == 16);

            check("the counter's first increment gives 1", () -> Recipes.counter(client) == 1);
            check("the counter's second gives 2", () -> Recipes.counter(client) == 2);
            check("the shared value is seeded with 100 and raised to 110", () -> Recipes.sharedValue(client) == 110);
            check("the shared value is 110 in Curator's SharedCount format (4 bytes)",
                    () -> readBytes(client, "/config/limit").length == 4
                            && java.nio.ByteBuffer.wrap(readBytes(client, "/config/limit")).getInt() == 110);
            boolean opened = Recipes.latch(client);
            check("the latch opens after its 3 count-downs", () -> opened
                    && new io.zkcoord.barrier.ZkCountDownLatch(client, "/latches/partitions-loaded").getCount() == 0);
            boolean passed = Recipes.barrier(client);
            check("the barrier lets its worker through once removed", () -> passed);
            boolean together = Recipes.doubleBarrier(client);
            check("the double barrier's member enters and leaves, leaving no node",
                    () -> together && children(client, "/barriers/load-test").stream().noneMatch(c -> c.startsWith("member-")));

            try (ZkLease held = new ZkMutex(client, "/locks/nightly-export").acquire()) {
                QueueSnapshot s = Recipes.inspect(client);
                check("inspect sees the one holder", () -> s.holders().size() == 1 && s.waiters().isEmpty()
                        && s.holders().get(0).fencingToken() == held.fencingToken());
            }

            ZkMutex watched = Observing.watchForLoss(client);
            watched.lock();
            watched.unlock();
            Observing.logSlowAcquisitions(client);
            Recipes.mutex(client);

            long curatorToken = Migrating.exportOrders(client);
            check("a mutex under Protocol.CURATOR gives a fencing token", () -> curatorToken > 0);
            Migrating.readCatalog(client);
            try (io.zkcoord.election.ZkLeaderElection e = Migrating.joinScheduler(client, "worker-1")) {
                boolean led = e.awaitLeadership(Duration.ofSeconds(30));
                check("the only participant under Protocol.CURATOR leads", () -> led);
            }
            try (io.zkcoord.election.ZkLeaderElection e = Migrating.joinReporter(client, "worker-1")) {
                boolean led = e.awaitLeadership(Duration.ofSeconds(30));
                check("the only participant sharing with LeaderSelector leads", () -> led);
            }
            long laterToken = Migrating.exportOrdersAfterMigration(client);
            check("after the last step the token still grows", () -> laterToken > curatorToken);
            check("the migration snippets leave no lock node", () -> children(client, "/locks/orders").isEmpty()
                    && children(client, "/locks/catalog").isEmpty());
        }

        ChoosingChecks.all(connect, this::check);

        try (ZkClient authenticated = Connecting.authenticated(connect)) {
            check("an authorization makes the recipes' nodes CREATOR_ALL_ACL",
                    () -> authenticated.acl().equals(ZooDefs.Ids.CREATOR_ALL_ACL));
            Recipes.mutex(authenticated);
        }

        try (ZkClient billing = Securing.billingService(connect);
                ZkClient other = ZkClient.builder().connectString(connect).build()) {
            ZkMutex invoices = new ZkMutex(billing, "/locks/billing/invoices");
            invoices.lock();
            try {
                check("billing's lock directory is billing's alone", () -> {
                    try {
                        List<org.apache.zookeeper.data.ACL> acl = billing.zooKeeper()
                                .getACL("/locks/billing/invoices", new org.apache.zookeeper.data.Stat());
                        return acl.size() == 1 && acl.get(0).getId().getScheme().equals("digest");
                    } catch (Exception e) {
                        return false;
                    }
                });
                long start = System.nanoTime();
                boolean got = Securing.tryAsAnotherService(other);
                long millis = (System.nanoTime() - start) / 1_000_000;
                check("another identity is refused at once, not after its 30 s", () -> !got && millis < 10_000);
            } finally {
                invoices.unlock();
            }
        }

        ZKClientConfig tls = Connecting.tlsSettings("/etc/zk/client.p12", "/etc/zk/trust.p12", "changeit");
        check("the TLS settings ask for a secure Netty connection",
                () -> tls.getBoolean("zookeeper.client.secure")
                        && "org.apache.zookeeper.ClientCnxnSocketNetty".equals(tls.getProperty("zookeeper.clientCnxnSocket")));
        // overTls is compiled, not run: it needs an ensemble with a secureClientPort and certificates.
    }

    private void check(String what, BooleanSupplier condition) {
        boolean ok;
        try {
            ok = condition.getAsBoolean();
        } catch (RuntimeException e) {
            failures.add(what + ": " + e);
            return;
        }
        if (!ok) {
            failures.add(what);
        }
        System.out.println("snippets: " + (ok ? "ok   " : "FAIL ") + what);
    }

    private static boolean tryLock(ZkClient client) {
        try {
            return Recipes.tryLock(client);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean register(ZkClient client, String phoneNumber, java.util.Set<String> users) {
        try {
            return Recipes.register(client, phoneNumber, users);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static List<String> children(ZkClient client, String path) {
        try {
            return client.call(path, zk -> zk.getChildren(path, false));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException | InterruptedException e) {
            throw new IllegalStateException("cannot read " + path + ": " + e, e);
        }
    }

    private static String read(ZkClient client, String path) {
        return new String(readBytes(client, path), StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(ZkClient client, String path) {
        try {
            return client.call(path, zk -> zk.getData(path, false, null));
        } catch (KeeperException | InterruptedException e) {
            throw new IllegalStateException("cannot read " + path + ": " + e, e);
        }
    }

    private static void create(ZkClient client, String path, String data) throws Exception {
        client.call(path, zk -> {
            try {
                return zk.create(path, bytes(data), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                return path;
            }
        });
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
