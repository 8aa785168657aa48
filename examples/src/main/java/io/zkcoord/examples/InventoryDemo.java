package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;

/**
 * The classic case: 2 units of stock in a znode, 5 buyers in 5 separate JVM processes, each
 * taking {@code ZkMutex} {@code /demo/locks/stock} before it reads, checks and decrements the
 * stock. Exactly 2 buy. With {@code --no-lock} the buyers skip the lock and the shop oversells.
 *
 * <p>Prints a timeline (who asked, who waited how long, who held with which fencing token, what
 * each read and wrote), a chart of the critical sections, and the outcome. Exits with status 1 if
 * the locked run did not sell exactly 2 units (or anything failed), so that CI notices.
 *
 * <pre>
 * usage: InventoryDemo [--connect host:port,...] [--no-lock] [--buyers N] [--stock N]
 * </pre>
 */
public final class InventoryDemo {

    static final String ROOT = "/demo";
    static final String STOCK = ROOT + "/stock";
    static final String LOCK = ROOT + "/locks/stock";
    static final String ORDERS = ROOT + "/orders";
    static final String READY = ROOT + "/ready";
    static final String GO = ROOT + "/go";

    private static final String USAGE = "usage: InventoryDemo [--connect host:port,...] [--no-lock] [--buyers N] [--stock N]\n"
            + "  without --connect it starts a local 3-server ensemble and stops it at the end";
    private static final long BUYER_TIMEOUT_SECONDS = 90;

    private final Timeline timeline;
    private final String connectString;
    private final boolean noLock;
    private final int buyers;
    private final int units;
    private final Map<String, String> results = new ConcurrentHashMap<>();

    private InventoryDemo(Timeline timeline, String connectString, boolean noLock, int buyers, int units) {
        this.timeline = timeline;
        this.connectString = connectString;
        this.noLock = noLock;
        this.buyers = buyers;
        this.units = units;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect", "--buyers", "--stock"), Set.of("--no-lock"), USAGE);
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            InventoryDemo demo = new InventoryDemo(timeline, ensemble.connectString(), options.flag("--no-lock"),
                    Integer.parseInt(options.value("--buyers").orElse("5")),
                    Integer.parseInt(options.value("--stock").orElse("2")));
            status = demo.run() ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    /** @return true if the outcome is the expected one */
    private boolean run() throws Exception {
        timeline.line("");
        timeline.line(String.format("Inventory demo: %d units of stock in %s, %d buyers in %d separate JVMs, %s.",
                units, STOCK, buyers, buyers, noLock
                        ? "each reading and decrementing the stock WITHOUT a lock"
                        : "each holding ZkMutex " + LOCK + " while it reads, checks and decrements the stock"));
        timeline.line("");
        try (ZkClient client = DemoEnsemble.client(connectString)) {
            prepare(client);
            List<Process> processes = new ArrayList<>();
            List<Thread> relays = new ArrayList<>();
            try {
                for (int i = 1; i <= buyers; i++) {
                    String name = "buyer-" + i;
                    timeline.row(name);
                    Process p = startBuyer(name);
                    processes.add(p);
                    relays.add(relay(name, p));
                }
                awaitReady(client, processes);
                timeline.say("demo", "all %d buyers are connected: GO", buyers);
                Znodes.create(client, GO, "", CreateMode.PERSISTENT);
                boolean allOk = true;
                for (int i = 0; i < processes.size(); i++) {
                    Process p = processes.get(i);
                    if (!p.waitFor(BUYER_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                        timeline.say("demo", "buyer-%d did not finish within %d s", i + 1, BUYER_TIMEOUT_SECONDS);
                        allOk = false;
                    } else if (p.exitValue() != 0) {
                        timeline.say("demo", "buyer-%d exited with status %d", i + 1, p.exitValue());
                        allOk = false;
                    }
                }
                for (Thread relay : relays) {
                    relay.join(TimeUnit.SECONDS.toMillis(5));
                }
                return report(client, allOk);
            } finally {
                for (Process p : processes) {
                    p.destroyForcibly();
                }
            }
        }
    }

    /** A clean slate: the stock, and folders for orders and ready buyers. */
    private void prepare(ZkClient client) throws Exception {
        Znodes.deleteTree(client, ROOT);
        for (String path : List.of(ROOT, ORDERS, READY)) {
            Znodes.create(client, path, "", CreateMode.PERSISTENT);
        }
        Znodes.create(client, STOCK, Integer.toString(units), CreateMode.PERSISTENT);
        timeline.say("demo", "%s = %d", STOCK, units);
    }

    private Process startBuyer(String name) throws IOException {
        List<String> args = new ArrayList<>(List.of("--connect", connectString, "--name", name,
                "--t0", Long.toString(timeline.t0())));
        if (noLock) {
            args.add("--no-lock");
        }
        return new ProcessBuilder(Jvm.command(Jvm.LIGHT, Buyer.class.getName(), args))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    /** Copies a buyer's timeline lines to ours and keeps its RESULT line. */
    private Thread relay(String name, Process p) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("RESULT ")) {
                        results.put(name, line.substring("RESULT ".length()));
                    } else {
                        timeline.line(line);
                    }
                }
            } catch (IOException e) {
                timeline.say("demo", "lost the output of %s: %s", name, e);
            }
        }, "relay-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void awaitReady(ZkClient client, List<Process> processes) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BUYER_TIMEOUT_SECONDS);
        while (client.call(READY, zk -> zk.getChildren(READY, false)).size() < buyers) {
            for (Process p : processes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("a buyer exited before the start, status " + p.exitValue());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the buyers did not all connect within " + BUYER_TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(50);
        }
    }

    private boolean report(ZkClient client, boolean buyersOk) throws Exception {
        int sold = 0;
        for (int i = 1; i <= buyers; i++) {
            String name = "buyer-" + i;
            String[] r = results.getOrDefault(name, "none").split(" ");
            if (r.length == 3) {
                timeline.held(name, Long.parseLong(r[1]), Long.parseLong(r[2]));
            }
            if (r[0].equals("bought")) {
                sold++;
            }
        }
        timeline.printChart(noLock
                ? "Each buyer's read-to-write section (no lock; '#' on several rows at once = buyers acting on the same stock):"
                : "Who held " + LOCK + " ('#'), one row per buyer process:");
        int orders = client.call(ORDERS, zk -> zk.getChildren(ORDERS, false)).size();
        int finalStock = Znodes.readInt(client, STOCK);
        timeline.line("");
        timeline.line(String.format("Outcome: %d units in stock at the start; %d buyers were told they bought, "
                + "%d orders recorded, final stock %d.", units, sold, orders, finalStock));
        boolean exact = sold == units && orders == units && finalStock == 0;
        if (noLock) {
            timeline.line(exact
                    ? "Without the lock the race was not hit this time; run again, it usually oversells."
                    : String.format("OVERSOLD: %d orders for %d units: buyers read the same stock level before "
                            + "another wrote it back, and the stock record is wrong as well.", orders, units));
            return buyersOk;
        }
        timeline.line(exact && buyersOk
                ? String.format("OK: exactly %d sold; the lock made each read-check-decrement happen alone.", units)
                : "WRONG: the locked run did not sell exactly " + units + " units.");
        return exact && buyersOk;
    }
}
