package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkLock;
import io.zkcoord.lock.ZkReadWriteLock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;

/**
 * Readers of the stock level share {@link ZkReadWriteLock}'s read lock; a restocking writer holds
 * its write lock alone; readers that arrive after the writer queued wait for it (FIFO, so writers
 * never starve).
 *
 * <p>Five actors, each with its own {@link ZkClient} and so its own ZooKeeper session, exactly as
 * five processes would be (threads of one JVM keep the demo quick; {@link InventoryDemo} shows
 * separate processes):
 * <ol>
 *   <li>{@code reader-1} and {@code reader-2} take the read lock and hold it together;
 *   <li>{@code writer} asks for the write lock and queues behind them;
 *   <li>{@code reader-3} and {@code reader-4} ask for the read lock and queue behind the writer;
 *   <li>the first readers finish; the writer holds alone and restocks 2 to 5; then readers 3 and 4
 *       hold together and read 5.
 * </ol>
 * The demo checks what it shows: readers overlapped, the writer never overlapped anyone, and the
 * late readers saw the restocked level. It exits with status 1 otherwise.
 *
 * <pre>
 * usage: ReadWriteDemo [--connect host:port,...]
 * </pre>
 */
public final class ReadWriteDemo {

    static final String STOCK = "/demo/stock";
    static final String LOCK = "/demo/locks/stock-rw";

    private static final long HOLD_MILLIS = 500;
    private static final long WAIT_SECONDS = 60;

    private final Timeline timeline;
    private final String connectString;
    private final AtomicInteger readersInside = new AtomicInteger();
    private final AtomicInteger writersInside = new AtomicInteger();
    private final AtomicInteger mostReadersInside = new AtomicInteger();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<ZkClient> clients = new CopyOnWriteArrayList<>();
    private final CountDownLatch firstReadersHold = new CountDownLatch(2);
    private final CountDownLatch firstReadersMayGo = new CountDownLatch(1);
    private final AtomicInteger lateReadersSaw = new AtomicInteger();

    private ReadWriteDemo(Timeline timeline, String connectString) {
        this.timeline = timeline;
        this.connectString = connectString;
    }

    public static void main(String[] args) {
        Options options = Options.parse(args, Set.of("--connect"), Set.of(), "usage: ReadWriteDemo [--connect host:port,...]");
        Timeline timeline = Timeline.startingNow();
        int status;
        try (DemoEnsemble ensemble = DemoEnsemble.open(options, timeline)) {
            status = new ReadWriteDemo(timeline, ensemble.connectString()).run() ? 0 : 1;
        } catch (Exception e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    private boolean run() throws Exception {
        timeline.line("");
        timeline.line("Read/write demo: readers share ZkReadWriteLock " + LOCK + "; a restocking writer holds it alone.");
        timeline.line("");
        ExecutorService actors = Executors.newCachedThreadPool();
        try (ZkClient client = DemoEnsemble.client(connectString)) {
            Znodes.deleteTree(client, "/demo");
            Znodes.create(client, "/demo", "", CreateMode.PERSISTENT);
            Znodes.create(client, STOCK, "2", CreateMode.PERSISTENT);
            timeline.say("demo", "%s = 2", STOCK);
            for (String name : List.of("reader-1", "reader-2", "writer", "reader-3", "reader-4")) {
                timeline.row(name);
            }
            List<Future<?>> running = new ArrayList<>();

            running.add(actors.submit(() -> firstReader("reader-1")));
            running.add(actors.submit(() -> firstReader("reader-2")));
            if (!firstReadersHold.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the first readers did not get the read lock");
            }

            running.add(actors.submit(this::writer));
            awaitQueue(client, kinds -> kinds.contains("write"));

            running.add(actors.submit(() -> lateReader("reader-3")));
            running.add(actors.submit(() -> lateReader("reader-4")));
            awaitQueue(client, kinds -> kinds.size() == 5);
            timeline.say("demo", "queue in %s, oldest first: %s", LOCK, String.join(" ", queue(client)));

            timeline.say("demo", "readers 1 and 2 finish reading");
            firstReadersMayGo.countDown();
            for (Future<?> f : running) {
                f.get(WAIT_SECONDS, TimeUnit.SECONDS);
            }
        } finally {
            firstReadersMayGo.countDown();
            actors.shutdownNow();
            for (ZkClient c : clients) {
                c.close();
            }
        }
        timeline.printChart("Who held " + LOCK + " ('#'); columns with several '#' are shared holds:");
        timeline.line("");
        if (mostReadersInside.get() < 2) {
            violations.add("readers never held the read lock together");
        }
        if (lateReadersSaw.get() != 2) {
            violations.add("readers 3 and 4 did not both read the restocked level 5");
        }
        if (violations.isEmpty()) {
            timeline.line("OK: up to " + mostReadersInside.get() + " readers held the read lock together; the writer held "
                    + "it alone; readers queued behind the writer waited for it and read the restocked level.");
            return true;
        }
        timeline.line("WRONG: " + String.join("; ", violations));
        return false;
    }

    /** Holds the read lock until the demo lets it go, so that the writer and later readers queue. */
    private Void firstReader(String name) throws Exception {
        ZkClient client = newClient();
        ZkLock read = new ZkReadWriteLock(client, LOCK).readLock();
        read.lock();
        long from = timeline.now();
        try {
            enterRead(name, read);
            timeline.say(name, "reads stock = %d", Znodes.readInt(client, STOCK));
            firstReadersHold.countDown();
            firstReadersMayGo.await();
            leaveRead(name, from);
        } finally {
            read.unlock();
        }
        return null;
    }

    private Void writer() throws Exception {
        ZkClient client = newClient();
        ZkLock write = new ZkReadWriteLock(client, LOCK).writeLock();
        timeline.say("writer", "asks for the write lock (readers hold it)");
        write.lock();
        long from = timeline.now();
        try {
            int others = readersInside.get() + writersInside.getAndIncrement();
            if (others != 0) {
                violations.add("the writer held the lock while " + others + " others did");
            }
            timeline.say("writer", "HOLDS the write lock ALONE (%d others inside), fencing token %d", others,
                    write.fencingToken());
            int stock = Znodes.readInt(client, STOCK);
            Thread.sleep(HOLD_MILLIS);
            Znodes.writeInt(client, STOCK, stock + 3);
            timeline.say("writer", "restocks: %d -> %d", stock, stock + 3);
            writersInside.decrementAndGet();
            timeline.held("writer", from, timeline.now());
            timeline.say("writer", "releases the write lock");
        } finally {
            write.unlock();
        }
        return null;
    }

    /** Arrives after the writer queued: waits for the writer, then reads what it wrote. */
    private Void lateReader(String name) throws Exception {
        ZkClient client = newClient();
        ZkLock read = new ZkReadWriteLock(client, LOCK).readLock();
        timeline.say(name, "asks for the read lock (a writer is queued ahead)");
        read.lock();
        long from = timeline.now();
        try {
            enterRead(name, read);
            int stock = Znodes.readInt(client, STOCK);
            if (stock == 5) {
                lateReadersSaw.incrementAndGet();
            }
            timeline.say(name, "reads stock = %d", stock);
            Thread.sleep(HOLD_MILLIS);
            leaveRead(name, from);
        } finally {
            read.unlock();
        }
        return null;
    }

    private void enterRead(String name, ZkLock read) {
        int inside = readersInside.incrementAndGet();
        mostReadersInside.accumulateAndGet(inside, Math::max);
        if (writersInside.get() != 0) {
            violations.add(name + " held the read lock while the writer held the write lock");
        }
        timeline.say(name, "HOLDS the read lock, %d reader(s) inside, fencing token %d", inside, read.fencingToken());
    }

    private void leaveRead(String name, long from) {
        readersInside.decrementAndGet();
        timeline.held(name, from, timeline.now());
        timeline.say(name, "releases the read lock");
    }

    private ZkClient newClient() {
        ZkClient c = DemoEnsemble.client(connectString);
        clients.add(c);
        return c;
    }

    /** @return the kinds of the nodes in the lock directory, oldest first ({@code read}, {@code write}) */
    private static List<String> queue(ZkClient client) throws Exception {
        List<String> children = client.call(LOCK, zk -> zk.exists(LOCK, false) == null ? List.of() : zk.getChildren(LOCK, false));
        // node names are <kind>-<attempt id>-<10-digit sequence>: order by the sequence
        return children.stream()
                .sorted(Comparator.comparing((String n) -> n.substring(n.lastIndexOf('-') + 1)))
                .map(n -> n.substring(0, n.indexOf('-')))
                .collect(Collectors.toList());
    }

    private static void awaitQueue(ZkClient client, Predicate<List<String>> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.test(queue(client))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the lock queue never reached the expected shape: " + queue(client));
            }
            Thread.sleep(20);
        }
    }
}
