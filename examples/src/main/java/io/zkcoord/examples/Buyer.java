package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.data.Stat;

/**
 * One buyer of {@link InventoryDemo}, in a JVM of its own: connects, says it is ready, waits for
 * the start signal, then reads the stock, and if any is left, takes one unit and places an order.
 * With the lock it does all that while holding {@link ZkMutex} {@code /demo/locks/stock}; with
 * {@code --no-lock} it does not, and a pause between its read and its write (a payment, say) leaves
 * room for the others to read the same stock.
 *
 * <p>Prints its events on the demo's timeline, then a last line for the parent: {@code RESULT
 * <bought|sold-out> <held from ms> <held to ms>}.
 */
public final class Buyer {

    private static final String USAGE =
            "usage: Buyer --connect host:port,... --name NAME --t0 MILLIS [--work-ms MS] [--no-lock]";

    private final ZkClient client;
    private final String name;
    private final Timeline timeline;
    private final long workMillis;

    private Buyer(ZkClient client, String name, Timeline timeline, long workMillis) {
        this.client = client;
        this.name = name;
        this.timeline = timeline;
        this.workMillis = workMillis;
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, Set.of("--connect", "--name", "--t0", "--work-ms"), Set.of("--no-lock"), USAGE);
        String name = options.require("--name");
        Timeline timeline = new Timeline(Long.parseLong(options.require("--t0")));
        long workMillis = Long.parseLong(options.value("--work-ms").orElse("300"));
        try (ZkClient client = DemoEnsemble.client(options.require("--connect"))) {
            timeline.say(name, "connected: pid %d, session 0x%x", ProcessHandle.current().pid(), client.sessionId());
            Buyer buyer = new Buyer(client, name, timeline, workMillis);
            buyer.announceReady();
            buyer.awaitGo();
            String result = options.flag("--no-lock") ? buyer.buyWithoutLock() : buyer.buyWithLock();
            System.out.println("RESULT " + result);
        }
    }

    /** The classic case: read, check and decrement, all under the lock. */
    private String buyWithLock() throws Exception {
        ZkMutex mutex = new ZkMutex(client, InventoryDemo.LOCK);
        long asked = timeline.now();
        timeline.say(name, "asks for the lock");
        mutex.lock();
        long from = timeline.now();
        String outcome;
        try {
            long token = mutex.fencingToken();
            timeline.say(name, "HOLDS the lock after waiting %d ms, fencing token %d", from - asked, token);
            outcome = buy(token, mutex);
        } finally {
            // Said before the release, so that it comes before the next holder's lines.
            timeline.say(name, "releases the lock");
            mutex.unlock();
        }
        long to = timeline.now();
        return outcome + " " + from + " " + to;
    }

    /** The same steps with no lock: every buyer may read the same stock level. */
    private String buyWithoutLock() throws Exception {
        long from = timeline.now();
        String outcome = buy(0, null);
        long to = timeline.now();
        return outcome + " " + from + " " + to;
    }

    /**
     * Read, check, pause, decrement: safe only while the lock is held. With the lock, the new stock
     * level and the order are written together with {@code commitIfHeld}: one multi that the server
     * applies only while this buyer's lock node still exists, so a buyer whose hold was lost (a long
     * pause, a partition) cannot write at all.
     */
    private String buy(long token, ZkMutex held) throws Exception {
        int stock = readStock();
        if (stock <= 0) {
            timeline.say(name, "reads stock = %d: SOLD OUT, buys nothing", stock);
            return "sold-out";
        }
        timeline.say(name, "reads stock = %d, takes one, pays (%d ms)...", stock, workMillis);
        Thread.sleep(workMillis);
        if (held == null) {
            // A plain write, version -1: nothing stops two buyers from both writing.
            Znodes.writeInt(client, InventoryDemo.STOCK, stock - 1);
            placeOrder(token);
        } else {
            held.commitIfHeld(List.of(
                    Op.setData(InventoryDemo.STOCK, Integer.toString(stock - 1).getBytes(StandardCharsets.UTF_8), -1),
                    Op.create(InventoryDemo.ORDERS + "/" + name,
                            String.format("token %d", token).getBytes(StandardCharsets.UTF_8),
                            client.aclFor(InventoryDemo.ORDERS + "/" + name),
                            CreateMode.PERSISTENT)));
        }
        timeline.say(name, "BOUGHT one, writes stock = %d", stock - 1);
        return "bought";
    }

    private int readStock() throws Exception {
        return Znodes.readInt(client, InventoryDemo.STOCK);
    }

    /** One order node per buyer; created at most once even if the create is retried. */
    private void placeOrder(long token) throws Exception {
        String path = InventoryDemo.ORDERS + "/" + name;
        Znodes.create(client, path, token == 0 ? "no lock" : String.format("token %d", token), CreateMode.PERSISTENT);
    }

    private void announceReady() throws Exception {
        Znodes.create(client, InventoryDemo.READY + "/" + name, "", CreateMode.EPHEMERAL);
    }

    /** Waits for the parent's start signal, so that every buyer starts at the same moment. */
    private void awaitGo() throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        Stat exists = client.call(InventoryDemo.GO, zk -> zk.exists(InventoryDemo.GO, event -> go.countDown()));
        if (exists == null && !go.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + ": no start signal within 60 s");
        }
    }
}
