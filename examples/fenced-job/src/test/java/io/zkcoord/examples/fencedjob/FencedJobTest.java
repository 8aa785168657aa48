package io.zkcoord.examples.fencedjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import io.zkcoord.examples.fencedjob.FencedJob.Outcome;
import io.zkcoord.test.FencedResource;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The worked example of docs/testing.md: the job's session expires while it is in the middle of a
 * write; another process takes the lock and writes; the job's stale write is refused and the job
 * stops.
 */
@ZkEnsemble
class FencedJobTest {

    // snippet:expire-mid-write
    @Test
    void aJobWhoseSessionExpiresMidWriteIsRefusedAndStops(ZkTestEnsemble ensemble, ZkClient jobClient,
            ZkClient otherClient) throws Exception {
        FencedResource resource = new FencedResource();
        CountDownLatch inThirdWrite = new CountDownLatch(1);
        CountDownLatch finishWrite = new CountDownLatch(1);
        FencedJob.Store store = (token, item) -> {
            if (item.equals("item-2")) {          // hold the job inside its third write
                inThirdWrite.countDown();
                await(finishWrite);
            }
            resource.write(token, item);
        };
        FencedJob job = new FencedJob(jobClient, "/locks/export", store);
        CompletableFuture<Outcome> outcome = CompletableFuture.supplyAsync(() -> run(job));
        assertTrue(inThirdWrite.await(30, TimeUnit.SECONDS), "the job is writing");

        ensemble.expireSession(jobClient);        // on the server: the lock is free now
        FencedJob other = new FencedJob(otherClient, "/locks/export", resource::write);
        assertEquals(Outcome.DONE, other.run(1, Duration.ofSeconds(10)));
        finishWrite.countDown();                  // the job's write goes on, with its old token

        assertEquals(Outcome.REFUSED, outcome.get(30, TimeUnit.SECONDS), "the job stopped");
        assertEquals(1, resource.rejected(), "its stale write was refused");
        assertEquals(List.of("item-0", "item-1", "item-0"), resource.accepted());
    }
    // end:expire-mid-write

    @Test
    void aJobThatIsToldOfTheLossInTimeStopsBeforeWriting(ZkTestEnsemble ensemble, ZkClient jobClient)
            throws Exception {
        FencedResource resource = new FencedResource();
        CountDownLatch betweenWrites = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        FencedJob.Store store = (token, item) -> {
            resource.write(token, item);
            if (item.equals("item-0")) {          // pause after the first write
                betweenWrites.countDown();
                await(goOn);
            }
        };
        CompletableFuture<Outcome> outcome = CompletableFuture.supplyAsync(
                () -> run(new FencedJob(jobClient, "/locks/export", store)));
        assertTrue(betweenWrites.await(30, TimeUnit.SECONDS));

        ensemble.expireSession(jobClient);        // returns once the client heard LOST
        goOn.countDown();

        assertEquals(Outcome.LOST, outcome.get(30, TimeUnit.SECONDS));
        assertEquals(List.of("item-0"), resource.accepted());
        assertEquals(0, resource.rejected(), "nothing stale was even tried");
    }

    private static Outcome run(FencedJob job) {
        try {
            return job.run(3, Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the write go on");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
