package io.zkcoord.examples.scheduledjob;

import io.zkcoord.ZkClient;
import io.zkcoord.shedlock.ZkcoordLockProvider;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The application a user would write: a scheduled job ({@link TickJob}) that must run once per
 * tick however many instances run. The {@link ZkClient} comes from zkcoord's Spring Boot
 * auto-configuration ({@code zkcoord.connect-string}); the lock provider is one bean.
 *
 * <p>Run by {@link ScheduledJobDemo} as {@code --zkcoord.connect-string=HOST:PORT --demo.process=NAME}.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
public class ScheduledJobApplication {

    /**
     * The one line that makes the job run once across instances. With {@code --demo.no-lock=true}
     * the demo swaps in a provider that grants every lock, to show what the check catches.
     */
    @Bean
    LockProvider lockProvider(ZkClient client, @Value("${demo.no-lock:false}") boolean noLock) {
        if (noLock) {
            return configuration -> Optional.of(() -> { });
        }
        return new ZkcoordLockProvider(client, "/demo/shedlock");
    }

    public static void main(String[] args) {
        ExitWithParent.watchParent();
        SpringApplication.run(ScheduledJobApplication.class, args);
    }
}
