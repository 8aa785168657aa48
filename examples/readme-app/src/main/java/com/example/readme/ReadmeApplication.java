package com.example.readme;

import io.zkcoord.ZkClient;
import io.zkcoord.shedlock.ZkcoordLockProvider;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A Spring Boot application built from the README's two dependency blocks alone: the
 * auto-configured {@link ZkClient} and lock registry ({@code zkcoord.connect-string}), and a
 * {@code @SchedulerLock} job ({@link ReportJob}) on zkcoord's ShedLock provider. It exits 0 once
 * the job has run under zkcoord's lock and the registry's lock was taken, 1 if not within a minute.
 *
 * <p>{@code mvn spring-boot:run -Dspring-boot.run.arguments=--zkcoord.connect-string=127.0.0.1:2181}
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
public class ReadmeApplication {

    @Bean
    ZkcoordLockProvider lockProvider(ZkClient client) {
        return new ZkcoordLockProvider(client, "/readme-app/shedlock");
    }

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = SpringApplication.run(ReadmeApplication.class, args);
        boolean ran = context.getBean(ReportJob.class).awaitRun(Duration.ofMinutes(1));

        Lock lock = context.getBean(LockRegistry.class).obtain("readme-app");
        boolean locked = lock.tryLock(30, TimeUnit.SECONDS);
        if (locked) {
            lock.unlock();
        }
        System.out.println("readme-app: the @SchedulerLock job " + (ran ? "ran under zkcoord's lock" : "did NOT run")
                + "; the lock registry's lock was " + (locked ? "taken" : "NOT taken"));
        System.exit(SpringApplication.exit(context, () -> ran && locked ? 0 : 1));
    }
}
