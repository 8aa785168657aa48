package com.example.readme;

import io.zkcoord.shedlock.ZkcoordLockProvider;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** A scheduled job that runs once across every instance per tick, under ShedLock on zkcoord. */
@Component
public class ReportJob {

    private final ZkcoordLockProvider provider;
    private final CountDownLatch ranUnderLock = new CountDownLatch(1);

    public ReportJob(ZkcoordLockProvider provider) {
        this.provider = provider;
    }

    @Scheduled(fixedDelay = 200)
    @SchedulerLock(name = "readme-report", lockAtMostFor = "PT30S")
    public void report() {
        OptionalLong token = provider.fencingToken("readme-report");   // present only under the lock
        if (token.isPresent()) {
            System.out.println("readme-app: report job runs with fencing token " + token.getAsLong());
            ranUnderLock.countDown();
        }
    }

    /** @return true once the job has run holding its lock, false if not within {@code limit} */
    boolean awaitRun(Duration limit) throws InterruptedException {
        return ranUnderLock.await(limit.toMillis(), TimeUnit.MILLISECONDS);
    }
}
