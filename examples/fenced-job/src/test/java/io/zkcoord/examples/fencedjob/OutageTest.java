package io.zkcoord.examples.fencedjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zkcoord.ZkClient;
import io.zkcoord.ZkLease;
import io.zkcoord.examples.fencedjob.FencedJob.Outcome;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.test.Fault;
import io.zkcoord.test.FencedResource;
import io.zkcoord.test.ZkEnsemble;
import io.zkcoord.test.ZkTestEnsemble;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** docs/testing.md: ZooKeeper down when the service starts, and a partition that hides the holder. */
@ZkEnsemble
class OutageTest {

    // snippet:down-at-start
    @Test
    void startsWhileZooKeeperIsDownAndWorksOnceItIsBack(ZkTestEnsemble ensemble) throws Exception {
        FencedResource resource = new FencedResource();
        ensemble.stopServer(0);                                     // ZooKeeper is down
        try (ZkClient client = ensemble.clientBuilder().start()) {  // the service starts anyway
            FencedJob job = new FencedJob(client, "/locks/export", resource::write);
            assertEquals(Outcome.NOT_ACQUIRED, job.run(3, Duration.ofSeconds(1)));  // its time limit kept

            ensemble.restartServer(0);                              // ZooKeeper is back
            assertEquals(Outcome.DONE, job.run(3, Duration.ofSeconds(30)));
        }
    }
    // end:down-at-start

    // snippet:partition-hides-holder
    @Test
    void aHolderHiddenByAPartitionIsFencedOff(ZkTestEnsemble ensemble, ZkClient otherClient) throws Exception {
        FencedResource resource = new FencedResource();
        try (ZkClient holderClient = ensemble.clientBuilder().sessionTimeout(Duration.ofSeconds(3)).build()) {
            ZkLease held = new ZkMutex(holderClient, "/locks/export").acquire();
            resource.write(held.fencingToken(), "before the partition");
            try (Fault partition = ensemble.partition(holderClient)) {   // the holder hears nothing
                // Once the holder's session expires on the server, another process gets the lock.
                FencedJob other = new FencedJob(otherClient, "/locks/export", resource::write);
                assertEquals(Outcome.DONE, other.run(1, Duration.ofSeconds(30)));
                // The hidden holder still has its old token: the resource refuses it.
                assertThrows(IllegalStateException.class, () -> resource.write(held.fencingToken(), "late"));
                // And its client tells it, once its own session timeout has passed.
                held.whenLost().get(30, TimeUnit.SECONDS);
            }
        }
    }
    // end:partition-hides-holder
}
