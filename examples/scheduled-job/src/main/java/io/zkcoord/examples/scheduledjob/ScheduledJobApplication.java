package io.zkcoord.examples.scheduledjob;

import io.zkcoord.ZkClient;
import io.zkcoord.shedlock.ZkcoordLockProvider;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
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

    // snippet:lock-provider
    @Bean
    ZkcoordLockProvider lockProvider(ZkClient client) {
        return new ZkcoordLockProvider(client, "/demo/shedlock");
    }
    // end:lock-provider

    /**
     * With {@code --demo.no-lock=true} the demo puts a provider that grants every lock before the
     * real one, to show what its check catches: every instance runs every tick.
     */
    @Bean
    @Primary
    @ConditionalOnProperty(name = "demo.no-lock", havingValue = "true")
    LockProvider grantingEveryLock() {
        return configuration -> Optional.of(() -> { });
    }

    public static void main(String[] args) {
        ExitWithParent.watchParent();
        SpringApplication.run(ScheduledJobApplication.class, args);
    }
}
