package io.zkcoord.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.zkcoord.ZkClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * What {@link ZkEnsemble} does to a test class, checked by running small test classes (the nested
 * scenarios, which surefire does not run by themselves) through JUnit's own engine.
 */
class ExtensionTest {

    static final List<String> CONNECT_STRINGS = new CopyOnWriteArrayList<>();
    static final List<ZkClient> CLIENTS = new CopyOnWriteArrayList<>();
    static final List<ZkTestEnsemble> ENSEMBLES = new CopyOnWriteArrayList<>();

    @BeforeEach
    @AfterEach
    void forget() {
        CLIENTS.forEach(ZkClient::close); // a scenario may leave one open on purpose
        CONNECT_STRINGS.clear();
        CLIENTS.clear();
        ENSEMBLES.clear();
    }

    @Test
    void onAClassOneEnsembleServesEveryTestAndEachTestsClientsAreClosedAfterIt() {
        Events tests = run(ClassWide.class);
        tests.assertStatistics(s -> s.succeeded(2).failed(0));
        assertEquals(2, CONNECT_STRINGS.size());
        assertEquals(CONNECT_STRINGS.get(0), CONNECT_STRINGS.get(1), "the same ensemble");
        assertTrue(CLIENTS.stream().allMatch(ZkClient::isClosed), "every injected or made client closed");
        assertThrows(IllegalStateException.class, () -> ENSEMBLES.get(0).newClient(), "closed after the class");
    }

    @Test
    void onAMethodTheMethodGetsAFreshEnsemble() {
        Events tests = run(PerMethod.class);
        tests.assertStatistics(s -> s.succeeded(2).failed(0));
        assertNotEquals(CONNECT_STRINGS.get(0), CONNECT_STRINGS.get(1), "two ensembles");
        assertTrue(ENSEMBLES.size() == 2);
        for (ZkTestEnsemble e : ENSEMBLES) {
            assertThrows(IllegalStateException.class, e::newClient, "closed after its method");
        }
    }

    @Test
    void aTestThatLeavesAWatcherFailsNamingIt() {
        Events tests = runWithShortSettle(LeavesAWatcher.class);
        tests.assertStatistics(s -> s.failed(1));
        String message = failure(tests);
        assertTrue(message.contains("still has 1 watch") && message.contains("exist [/never-created]"), message);
        assertTrue(CLIENTS.get(0).isClosed(), "closed all the same");
    }

    @Test
    void theCheckCanBeTurnedOffPerTest() {
        run(LeavesAWatcherOnPurpose.class).assertStatistics(s -> s.succeeded(1).failed(0));
    }

    @Test
    void aTestThatLeavesItsOwnClientOpenFailsNamingIt() {
        Events tests = runWithShortSettle(LeavesItsOwnClient.class);
        tests.assertStatistics(s -> s.failed(1));
        String message = failure(tests);
        assertTrue(message.contains("built from clientBuilder()") && message.contains("was not closed"), message);
    }

    @Test
    void aTestThatClosesWhatItBuiltAndRemovesItsWatchesPasses() {
        run(CleanTest.class).assertStatistics(s -> s.succeeded(1).failed(0));
    }

    private static Events run(Class<?> scenario) {
        return EngineTestKit.engine("junit-jupiter").selectors(selectClass(scenario)).execute().testEvents();
    }

    /**
     * Runs a scenario whose leak never goes (a watch on a node nobody creates, a client nobody closes) with the
     * check's settle time at 1 s instead of 10 s: the leak is reported all the same, however slow the machine,
     * without the test waiting 10 s for it. Scenarios that must pass keep the full settle time.
     */
    private static Events runWithShortSettle(Class<?> scenario) {
        Duration settle = ZkEnsembleExtension.closeSettle;
        ZkEnsembleExtension.closeSettle = Duration.ofSeconds(1);
        try {
            return run(scenario);
        } finally {
            ZkEnsembleExtension.closeSettle = settle;
        }
    }

    private static String failure(Events tests) {
        Event failed = tests.failed().stream().findFirst().orElseThrow();
        return failed.getPayload(TestExecutionResult.class).orElseThrow().getThrowable().orElseThrow().getMessage();
    }

    // ---- scenarios ---------------------------------------------------------------------------------------------

    @ZkEnsemble
    static class ClassWide {
        @Test
        void one(ZkTestEnsemble ensemble, ZkClient injected) {
            CONNECT_STRINGS.add(ensemble.connectString());
            ENSEMBLES.add(ensemble);
            CLIENTS.add(injected);
            CLIENTS.add(ensemble.newClient());
        }

        @Test
        void two(ZkTestEnsemble ensemble, ZkClient injected) {
            CONNECT_STRINGS.add(ensemble.connectString());
            CLIENTS.add(injected);
        }
    }

    static class PerMethod {
        @Test
        @ZkEnsemble
        void one(ZkTestEnsemble ensemble) {
            CONNECT_STRINGS.add(ensemble.connectString());
            ENSEMBLES.add(ensemble);
        }

        @Test
        @ZkEnsemble
        void two(ZkTestEnsemble ensemble) {
            CONNECT_STRINGS.add(ensemble.connectString());
            ENSEMBLES.add(ensemble);
        }
    }

    @ZkEnsemble
    static class LeavesAWatcher {
        @Test
        void leaves(ZkClient client) throws Exception {
            CLIENTS.add(client);
            client.zooKeeper().exists("/never-created", event -> { });
        }
    }

    @ZkEnsemble
    static class LeavesAWatcherOnPurpose {
        @Test
        @SkipLeakCheck("the watch is the point of this test")
        void leaves(ZkClient client) throws Exception {
            client.zooKeeper().exists("/never-created", event -> { });
        }
    }

    @ZkEnsemble
    static class LeavesItsOwnClient {
        @Test
        void leaves(ZkTestEnsemble ensemble) {
            CLIENTS.add(ensemble.clientBuilder().build());
        }
    }

    @ZkEnsemble
    static class CleanTest {
        @Test
        void cleans(ZkTestEnsemble ensemble, ZkClient client) throws Exception {
            client.zooKeeper().exists("/created-later", event -> { });
            client.zooKeeper().create("/created-later", new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    org.apache.zookeeper.CreateMode.PERSISTENT); // fires, and so ends, the watch
            try (ZkClient own = ensemble.clientBuilder().build()) {
                own.zooKeeper().getData("/created-later", false, null);
            }
        }
    }
}
