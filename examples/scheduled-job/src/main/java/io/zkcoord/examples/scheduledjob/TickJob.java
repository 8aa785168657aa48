package io.zkcoord.examples.scheduledjob;

import io.zkcoord.ZkClient;
import io.zkcoord.shedlock.ZkcoordLockProvider;
import java.nio.charset.StandardCharsets;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.apache.zookeeper.CreateMode;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The job: every 2 seconds, in every instance, Spring calls {@link #tick()}; ShedLock lets one
 * instance run it. A run records itself as a znode under {@code /demo/runs} (which tick, which
 * process, its fencing token) for the demo to check.
 */
@Component
public class TickJob {

    /** The schedule's period; a tick is the number of whole periods since the epoch. */
    static final long PERIOD_MILLIS = 2_000;

    private final ZkClient client;
    private final ZkcoordLockProvider provider;
    private final String process;

    TickJob(ZkClient client, ZkcoordLockProvider provider, @Value("${demo.process:app}") String process) {
        this.client = client;
        this.provider = provider;
        this.process = process;
    }

    /**
     * lockAtLeastFor (1.5 s) outlasts the moment the other instances' schedulers fire for the same
     * tick (they share a clock here; across machines it must cover the clocks' skew), and ends
     * before the next tick (2 s). lockAtMostFor bounds a run whose instance died.
     */
    // snippet:scheduled-job
    @Scheduled(cron = "*/2 * * * * *")
    @SchedulerLock(name = "tick", lockAtMostFor = "PT10S", lockAtLeastFor = "PT1.5S")
    public void tick() throws Exception {
        long tick = (System.currentTimeMillis() + PERIOD_MILLIS / 4) / PERIOD_MILLIS;
        long token = provider.fencingToken("tick").orElse(0);   // 0: run without the lock (--no-lock)
        String record = "tick=" + tick + " process=" + process + " token=" + token;
        client.zooKeeper().create("/demo/runs/run-", record.getBytes(StandardCharsets.UTF_8),
                client.aclFor("/demo/runs/run-"), CreateMode.PERSISTENT_SEQUENTIAL);
        System.out.printf("  %-6s runs tick %d (fencing token %d)%n", process, tick, token);
    }
    // end:scheduled-job

    /** Tells the demo this instance is up: an ephemeral node that goes with its session. */
    @EventListener(ApplicationReadyEvent.class)
    public void ready() throws Exception {
        client.session();
        client.zooKeeper().create("/demo/ready/" + process, new byte[0], client.aclFor("/demo/ready/" + process),
                CreateMode.EPHEMERAL);
    }
}
