package io.zkcoord.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's LockRegistryLeaderInitiator over the registry, in 3 application contexts
 * with a client each (3 processes, as far as ZooKeeper can tell).
 */
class LeaderInitiatorTest {

    private TestingServer server;
    private RegistryFixture fixture;
    private final List<GenericApplicationContext> contexts = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        server = new TestingServer(true);
        fixture = new RegistryFixture(server);
    }

    @AfterEach
    void tearDown() throws Exception {
        contexts.forEach(GenericApplicationContext::close);
        fixture.close();
        server.close();
    }

    /** Exactly one of three contexts leads; when its context closes, exactly one of the others does. */
    @Test
    void exactlyOneLeaderAndANewOneAfterItsContextCloses() {
        String root = RegistryFixture.root();
        for (int i = 0; i < 3; i++) {
            GenericApplicationContext context = new GenericApplicationContext();
            ZkcoordLockRegistry registry = new ZkcoordLockRegistry(fixture.client(), root);
            context.registerBean(ZkcoordLockRegistry.class, () -> registry);
            context.registerBean(LockRegistryLeaderInitiator.class, () -> {
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry);
                initiator.setHeartBeatMillis(200);
                initiator.setBusyWaitMillis(50);
                return initiator;
            });
            context.refresh();
            contexts.add(context);
        }
        Await.until("exactly one leader", Duration.ofSeconds(20), () -> leaders().size() == 1);
        GenericApplicationContext first = leaders().get(0);
        Await.holds("the leader stays the only one", Duration.ofSeconds(2), () -> leaders().equals(List.of(first)));

        first.close();
        contexts.remove(first);
        Await.until("a new leader", Duration.ofSeconds(20), () -> leaders().size() == 1);
        GenericApplicationContext second = leaders().get(0);
        assertThat(second).isNotSameAs(first);
        Await.holds("the new leader stays the only one", Duration.ofSeconds(2), () -> leaders().equals(List.of(second)));
    }

    private List<GenericApplicationContext> leaders() {
        return contexts.stream()
                .filter(c -> c.isActive() && c.getBean(LockRegistryLeaderInitiator.class).getContext().isLeader())
                .toList();
    }
}
