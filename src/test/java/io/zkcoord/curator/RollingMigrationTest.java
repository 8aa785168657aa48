package io.zkcoord.curator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.curator.Fleet.Party;
import io.zkcoord.curator.Fleet.Side;
import io.zkcoord.testing.Await;
import io.zkcoord.test.FencedResource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * A rolling deploy off Curator, on one lock path under load: four processes (clients, each in its
 * own session) start on Curator's {@code InterProcessMutex}; one by one each is stopped and
 * replaced by zkcoord with {@code Protocol.CURATOR}; then one by one by zkcoord with {@code
 * Protocol.ZKCOORD}. Between replacements the fleet runs on. Through all of it a fenced resource
 * (token: our fencing token, or for a Curator holder the czxid of the head node it holds with)
 * refuses nothing, and the {@link QueueWitness} sees no overlap and FIFO order.
 */
class RollingMigrationTest {

    private static final int SLOTS = 4;
    /** Entries the fleet makes between two replacements. */
    private static final int ENTRIES_PER_STEP = 15;

    @Test
    void curatorToCuratorProtocolToZkcoordWithoutOverlap() throws Exception {
        String dir = "/migrating/orders";
        try (TestingServer server = new TestingServer(true); Fleet fleet = new Fleet(server.getConnectString())) {
            ZkClient look = fleet.zkcoord();
            QueueWitness witness = new QueueWitness(look.zooKeeper(), dir);
            FencedResource resource = new FencedResource();
            ExecutorService pool = Executors.newCachedThreadPool();
            List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            try {
                Worker[] slots = new Worker[SLOTS];
                for (int i = 0; i < SLOTS; i++) {
                    slots[i] = new Worker(fleet.mutex(Side.CURATOR_LIBRARY, dir, "curator-" + i), witness, resource, failures);
                    slots[i].start(pool);
                }
                List<String> steps = new ArrayList<>();
                for (Side next : List.of(Side.ZKCOORD_AS_CURATOR, Side.ZKCOORD)) {
                    for (int i = 0; i < SLOTS; i++) {
                        long before = witness.entries();
                        Await.until(Duration.ofMinutes(2), () -> witness.entries() >= before + ENTRIES_PER_STEP,
                                "the fleet runs on before replacing slot");
                        slots[i].stopAndClose(fleet);
                        String name = (next == Side.ZKCOORD ? "zkcoord-" : "ascurator-") + i;
                        slots[i] = new Worker(fleet.mutex(next, dir, name), witness, resource, failures);
                        slots[i].start(pool);
                        steps.add(name);
                    }
                }
                long before = witness.entries();
                Await.until(Duration.ofMinutes(2), () -> witness.entries() >= before + ENTRIES_PER_STEP,
                        "the fleet runs on, all on ZKCOORD");
                for (Worker w : slots) {
                    w.stopAndClose(fleet);
                }
                assertEquals(2 * SLOTS, steps.size());
            } finally {
                pool.shutdownNow();
            }
            assertEquals(List.of(), failures);
            assertEquals(List.of(), witness.problems());
            assertEquals(0, resource.rejected(), resource.toString());
            assertEquals(witness.entries(), resource.accepted().size());
            assertTrue(witness.entriesBySide().keySet().containsAll(List.of("curator", "ascurator", "zkcoord")),
                    witness.entriesBySide().toString());
        }
    }

    /** One process of the fleet: lock, write to the resource, unlock, until stopped. */
    private static final class Worker {
        private final Party party;
        private final QueueWitness witness;
        private final FencedResource resource;
        private final List<String> failures;
        private final AtomicBoolean stop = new AtomicBoolean();
        private Future<?> running;

        Worker(Party party, QueueWitness witness, FencedResource resource, List<String> failures) {
            this.party = party;
            this.witness = witness;
            this.resource = resource;
            this.failures = failures;
        }

        void start(ExecutorService pool) {
            running = pool.submit(() -> {
                while (!stop.get()) {
                    party.lock().lock();
                    try {
                        long head = witness.enter(party.name(), party.sessionId());
                        long own = party.token().getAsLong();
                        if (own != -1 && own != head) {
                            failures.add(party.name() + " holds with token " + own + " but the head's czxid is " + head);
                        }
                        try {
                            resource.write(own == -1 ? head : own, party.name());
                        } catch (IllegalStateException refused) {
                            failures.add(party.name() + " was refused by the resource: " + resource);
                        }
                    } finally {
                        party.unlock().run();
                    }
                }
                return null;
            });
        }

        /** Finishes the current cycle, then ends the process's session (closes its client). */
        void stopAndClose(Fleet fleet) throws Exception {
            stop.set(true);
            running.get(2, TimeUnit.MINUTES);
            fleet.close(party.client());
        }
    }
}
